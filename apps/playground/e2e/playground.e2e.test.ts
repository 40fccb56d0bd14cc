// End to end, in Debian's headless Chromium driven by playwright-core (never a downloaded browser): the built page is
// served from 127.0.0.1, the seed multi-head golden case is loaded through the page's file input, and the numbers the
// page shows are checked against the case's expected values. The Train tab then trains the copy task live on cpu and
// wasm (and webgpu where there is an adapter): the loss falls, the heatmaps change each step, pause and resume go on
// with the same trainer. In the Inspect tab a clicked head is ablated and restored, and the executor diff of cpu
// against wasm agrees on every node. Fails (never skips) when Chromium or the build is missing.
import { copyFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MASKED_RGB } from "../src/colormap.js";
import { serve, type Served } from "@attngraph/static-server";

const here = dirname(fileURLToPath(import.meta.url));
const app = join(here, "..");
const dist = join(app, "dist");
const CHROMIUM = "/usr/bin/chromium";
const CASE = join(app, "../../packages/testkit/golden/seed-002-mha-outproj-eval.json");
const SCREENSHOT = join(app, "artifacts/playground.png");
const TRAIN_SCREENSHOT = join(app, "artifacts/playground-train.png");
// `attngraph train copy --executor cpu` (seed 3, lr 0.001): the loss of step 1, and of step 30.
const CLI_LOSS_1 = 2.3379;
const CLI_LOSS_30 = 0.5987;

interface JsonTensor {
  shape: number[];
  data: number[];
}
const golden = JSON.parse(readFileSync(CASE, "utf8")) as { name: string; expected: { weights: JsonTensor }; tolerance: { abs: number; rel: number } };
const [B, H, L, S] = golden.expected.weights.shape as [number, number, number, number];
const expectedWeight = (b: number, h: number, i: number, j: number) => golden.expected.weights.data[((b * H + h) * L + i) * S + j]!;

let server: Served;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get update && apt-get install -y chromium); this test never downloads a browser`);
  }
  if (!existsSync(join(dist, "index.html"))) throw new Error(`${dist}/index.html is missing: run \`vite build\` first (the package's test script does)`);
  server = await serve(dist);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--enable-unsafe-webgpu"],
  });
  page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  // Generous: under `pnpm test` the 2 cores are shared with every other package's tests (CI has seen 5× slower runs).
  page.setDefaultTimeout(60_000);
  page.on("pageerror", (e) => pageErrors.push(String(e)));
  page.on("console", (m) => {
    if (m.type() === "error") pageErrors.push(m.text());
  });
  await page.goto(server.url);
  await settled(0);
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** The number of the last settled run. */
async function seq(): Promise<number> {
  return Number(await page.locator("#status").getAttribute("data-seq"));
}

/**
 * Waits until a run after `after` has settled, and returns its state ("done" or "error"). The first run on an executor
 * compiles its kernels (webgpu: WGSL pipelines on SwiftShader's CPU Vulkan), which on 2 cores shared with the rest of
 * `pnpm test` can take far longer than a warm run: such a run gets a longer `timeout`.
 */
async function settled(after: number, timeout = 60_000): Promise<string> {
  await page.waitForFunction(
    (n) => {
      const s = document.getElementById("status")!;
      return Number(s.dataset.seq) > n && (s.dataset.state === "done" || s.dataset.state === "error");
    },
    after,
    { timeout },
  );
  return (await page.locator("#status").getAttribute("data-state"))!;
}

/** Does something that re-runs, and waits for that run. */
async function rerun(action: () => Promise<unknown>, timeout?: number): Promise<string> {
  const before = await seq();
  await action();
  return settled(before, timeout);
}

/** Hovers cell (i, j) of a head's heatmap the way a user would, and returns what the readout then says. */
async function readCell(h: number, i: number, j: number): Promise<string> {
  const canvas = page.locator(`#heatmaps canvas.heatmap[data-head="${h}"]`);
  const cell = Number(await canvas.getAttribute("data-cell"));
  await canvas.hover({ position: { x: (j + 0.5) * cell, y: (i + 0.5) * cell } });
  return (await page.locator("#cell-readout").textContent())!;
}

function shownValue(readout: string): number {
  const m = /= (-?[\d.e+-]+)$/.exec(readout);
  if (!m) throw new Error(`the readout shows no number: "${readout}"`);
  return Number(m[1]);
}

/** The colour drawn at the centre of each cell of one head's canvas: "masked" or "ramp". */
async function cellKinds(h: number): Promise<string[][]> {
  return page.evaluate(
    ({ h, masked }) => {
      const c = document.querySelector<HTMLCanvasElement>(`#heatmaps canvas.heatmap[data-head="${h}"]`)!;
      const px = Number(c.dataset.cell);
      const ctx = c.getContext("2d")!;
      const out: string[][] = [];
      for (let i = 0; i < Number(c.dataset.rows); i++) {
        const row: string[] = [];
        for (let j = 0; j < Number(c.dataset.cols); j++) {
          const d = ctx.getImageData(Math.floor((j + 0.5) * px), Math.floor((i + 0.5) * px), 1, 1).data;
          row.push(d[0] === masked[0] && d[1] === masked[1] && d[2] === masked[2] ? "masked" : "ramp");
        }
        out.push(row);
      }
      return out;
    },
    { h, masked: [...MASKED_RGB] },
  );
}

const upper = (kinds: string[][]) => kinds.flatMap((row, i) => row.filter((_, j) => j > i));
const lowerAndDiag = (kinds: string[][]) => kinds.flatMap((row, i) => row.filter((_, j) => j <= i));

async function checkCellsMatchGolden(): Promise<void> {
  const tol = golden.tolerance;
  for (const [h, i, j] of [
    [1, 2, 0],
    [0, 2, 2],
    [0, 1, 0],
  ] as const) {
    const readout = await readCell(h, i, j);
    expect(readout).toContain(`weights[b=0, h=${h}, i=${i}, j=${j}]`);
    const want = expectedWeight(0, h, i, j);
    const got = shownValue(readout);
    // The page prints 6 significant digits; the case's tolerance is far coarser.
    expect(Math.abs(got - want), `${readout}, golden ${want}`).toBeLessThanOrEqual(tol.abs + tol.rel * Math.abs(want));
  }
}

/** The exact values of the output view's table (batch 0 of the graph's output). */
async function outputValues(): Promise<string[]> {
  return page.locator("#output-table td").evaluateAll((tds) => tds.map((td) => (td as HTMLElement).dataset.value!));
}

/** Presses "Run diff" and waits for that diff to settle; returns "done" or "error". */
async function diffed(): Promise<string> {
  const status = page.locator("#diff-status");
  const before = Number(await status.getAttribute("data-seq"));
  await page.click("#diff-run");
  await page.waitForFunction((n) => Number(document.getElementById("diff-status")!.dataset.seq) > n, before);
  return (await status.getAttribute("data-state"))!;
}

interface TrainStatus {
  state: string;
  step: number;
  loss: number;
}

async function trainStatus(): Promise<TrainStatus> {
  return page.locator("#train-status").evaluate((s: HTMLElement) => ({ state: s.dataset.state!, step: Number(s.dataset.step), loss: Number(s.dataset.loss) }));
}

/** Waits until the training status is in one of `states` with at least `minStep` steps done. */
async function trainUntil(states: string[], minStep = 0, timeout = 60_000): Promise<TrainStatus> {
  await page.waitForFunction(
    ({ states, minStep }) => {
      const s = document.getElementById("train-status")!;
      return states.includes(s.dataset.state!) && Number(s.dataset.step) >= minStep;
    },
    { states, minStep },
    { timeout },
  );
  return trainStatus();
}

/** What the loss chart shows: steps drawn, first and last loss. */
async function chart(): Promise<{ points: number; first: number; last: number; polyline: number }> {
  return page.locator("#loss-chart").evaluate((svg: SVGSVGElement) => ({
    points: Number(svg.dataset.points),
    first: Number(svg.dataset.first),
    last: Number(svg.dataset.last),
    polyline: (svg.querySelector("polyline")?.getAttribute("points") ?? "").split(" ").filter(Boolean).length,
  }));
}

/**
 * From now on, records every redraw of the training heatmaps: the step it shows, and the colour at the centre of
 * every cell of every head (what a user sees). Returns a function that reads the record.
 */
async function recordTrainDraws(): Promise<() => Promise<{ step: number; pixels: string }[]>> {
  await page.evaluate(() => {
    const w = window as unknown as { trainDraws: { step: number; pixels: string }[]; trainObserver?: MutationObserver };
    w.trainObserver?.disconnect();
    w.trainDraws = [];
    const box = document.getElementById("train-heatmaps")!;
    w.trainObserver = new MutationObserver(() => {
      if (!box.dataset.step) return;
      const pixels = [...box.querySelectorAll<HTMLCanvasElement>("canvas.heatmap")].map((c) => {
        const px = Number(c.dataset.cell);
        const ctx = c.getContext("2d")!;
        const cells: number[] = [];
        for (let i = 0; i < Number(c.dataset.rows); i++) {
          for (let j = 0; j < Number(c.dataset.cols); j++) cells.push(...ctx.getImageData(Math.floor((j + 0.5) * px), Math.floor((i + 0.5) * px), 1, 1).data.slice(0, 3));
        }
        return cells.join(",");
      });
      w.trainDraws.push({ step: Number(box.dataset.step), pixels: pixels.join("|") });
    });
    w.trainObserver.observe(box, { attributes: true, attributeFilter: ["data-step"] });
  });
  return () => page.evaluate(() => (window as unknown as { trainDraws: { step: number; pixels: string }[] }).trainDraws);
}

async function startTraining(executor: string, steps: number): Promise<void> {
  await page.selectOption("#train-executor", executor);
  await page.fill("#train-steps", String(steps));
  await page.fill("#train-lr", "0.001");
  await page.fill("#train-seed", "3");
  await page.click("#train-start");
}

/** Trains 30 steps on `executor` to the end, checking the curve, the heatmaps and the losses against the CLI's. */
async function trainCopyTask(executor: string): Promise<void> {
  const draws = await recordTrainDraws();
  await startTraining(executor, 30);
  const done = await trainUntil(["done", "error"]);
  expect(await page.locator("#train-errors p").allTextContents()).toEqual([]);
  expect(done).toMatchObject({ state: "done", step: 30 });
  expect(await page.locator("#train-status").textContent()).toContain(`done on ${executor} · step 30 of 30`);
  // The curve has a point per step and falls as the CLI's does.
  const c = await chart();
  expect(c.points).toBe(30);
  expect(c.polyline).toBe(30);
  expect(Math.abs(c.first - CLI_LOSS_1), `step 1 loss ${c.first}`).toBeLessThan(2e-3);
  expect(Math.abs(c.last - CLI_LOSS_30), `step 30 loss ${c.last}`).toBeLessThan(5e-3);
  expect(c.last).toBeLessThan(c.first / 2);
  // The heatmaps were redrawn once per step, in order, and what they show changed as the heads trained.
  const record = await draws();
  expect(record.map((d) => d.step)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
  expect(record[29]!.pixels).not.toBe(record[0]!.pixels);
  expect(new Set(record.map((d) => d.pixels)).size, "distinct heatmap frames in 30 steps").toBeGreaterThanOrEqual(10);
  expect(await page.locator("#train-heatmaps canvas.heatmap").count()).toBe(4);
  // Sample 0's causal rows: query 0 sees only key 0 (weight 1), key 1 is masked.
  expect(await readTrainCell(0, 0, 0)).toBe("weights[b=0, h=0, i=0, j=0] = 1");
  expect(await readTrainCell(3, 0, 1)).toMatch(/^weights\[b=0, h=3, i=0, j=1\] = masked/);
  expect(await page.locator("#train-explain").textContent()).toContain(executor);
}

async function readTrainCell(h: number, i: number, j: number): Promise<string> {
  const canvas = page.locator(`#train-heatmaps canvas.heatmap[data-head="${h}"]`);
  const cell = Number(await canvas.getAttribute("data-cell"));
  await canvas.hover({ position: { x: (j + 0.5) * cell, y: (i + 0.5) * cell } });
  return (await page.locator("#train-readout").textContent())!;
}

describe("playground in Chromium", () => {
  it("starts with a random-weight run on cpu and says which executors are not available here", async () => {
    expect(await page.locator("#status").getAttribute("data-state")).toBe("done");
    await expect.poll(() => page.locator('#executor-notes li[data-executor="cpu"]').textContent()).toBe("cpu: available");
    for (const name of ["wasm", "webgpu"]) {
      const note = page.locator(`#executor-notes li[data-executor="${name}"]`);
      await expect.poll(() => note.textContent()).not.toContain("checking");
      const text = (await note.textContent())!;
      // Either it runs here, or the page says plainly why not.
      expect(text === `${name}: available` || text.startsWith(`${name}: not available here (`), text).toBe(true);
    }
    expect(await page.locator("#heatmaps canvas.heatmap").count()).toBe(2);
    expect(await page.locator("#golden-note").textContent()).toContain("random, seed 1");
  });

  it("loads the seed multi-head case through the file input and shows its weights on cpu", async () => {
    const state = await rerun(() => page.setInputFiles("#case-file", CASE));
    expect(state).toBe("done");
    expect(await page.locator("#case-note").textContent()).toContain(golden.name);
    expect(await page.locator("#executor").inputValue()).toBe("cpu");
    expect(await page.locator("#heatmaps canvas.heatmap").count()).toBe(H);
    // Every graph node the plan runs is placed on cpu, as explain() says.
    const executors = await page.locator("#graph g.node:not(.input)").evaluateAll((gs) => gs.map((g) => g.getAttribute("data-executor")));
    expect(new Set(executors)).toEqual(new Set(["cpu"]));
    await checkCellsMatchGolden();
    expect(await page.locator("#golden-note").textContent()).toContain(`weights match the golden case ${golden.name}`);
  });

  it("runs the same case on wasm and shows the same numbers", async () => {
    const note = page.locator('#executor-notes li[data-executor="wasm"]');
    await expect.poll(() => note.textContent(), { timeout: 20_000 }).not.toContain("checking");
    expect(await note.textContent()).toBe("wasm: available");
    expect(await rerun(() => page.selectOption("#executor", "wasm"))).toBe("done");
    expect(await page.locator("#status").textContent()).toContain("on wasm");
    // The plan puts every node on wasm (cpu is only the fallback for ops wasm lacks; it lacks none of these).
    const executors = await page.locator("#graph g.node:not(.input)").evaluateAll((gs) => gs.map((g) => g.getAttribute("data-executor")));
    expect(new Set(executors)).toEqual(new Set(["wasm"]));
    expect(await page.locator('#timings-table tr[data-node="weights"] td:nth-child(3)').textContent()).toBe("wasm");
    await checkCellsMatchGolden();
    expect(await page.locator("#golden-note").textContent()).toContain(`weights match the golden case ${golden.name}`);
    expect(await rerun(() => page.selectOption("#executor", "cpu"))).toBe("done");
  });

  it("runs the case on webgpu where the browser has an adapter, and otherwise says why in words", async () => {
    const note = page.locator('#executor-notes li[data-executor="webgpu"]');
    await expect.poll(() => note.textContent(), { timeout: 60_000 }).not.toContain("checking");
    const text = (await note.textContent())!;
    if (text === "webgpu: available") {
      // Headless Chromium with --disable-gpu still has SwiftShader's CPU Vulkan, so this is the usual branch here.
      // The page's first webgpu run: every pipeline is compiled here.
      expect(await rerun(() => page.selectOption("#executor", "webgpu"), 120_000)).toBe("done");
      const executors = await page.locator("#graph g.node:not(.input)").evaluateAll((gs) => gs.map((g) => g.getAttribute("data-executor")));
      expect(executors).toContain("webgpu");
      await checkCellsMatchGolden();
    } else {
      expect(text).toMatch(/^webgpu: not available here \(.+\)$/);
      expect(await rerun(() => page.selectOption("#executor", "webgpu"))).toBe("error");
      expect(await page.locator('#errors p[data-kind="executor"]').textContent()).toContain("webgpu: not available here (");
    }
    expect(await rerun(() => page.selectOption("#executor", "cpu"))).toBe("done");
    expect(await page.locator("#errors p").count()).toBe(0);
  });

  it("shows the upper triangle masked under causal, and unmasked when causal is toggled off", async () => {
    // The case is causal: every cell above the diagonal is masked, none below.
    for (let h = 0; h < H; h++) {
      const kinds = await cellKinds(h);
      expect(upper(kinds).every((k) => k === "masked")).toBe(true);
      expect(lowerAndDiag(kinds).every((k) => k === "ramp")).toBe(true);
    }
    expect(await readCell(0, 0, 2)).toMatch(/^weights\[b=0, h=0, i=0, j=2\] = masked/);

    expect(await rerun(() => page.locator('input[name="causal"]').uncheck())).toBe("done");
    for (let h = 0; h < H; h++) expect((await cellKinds(h)).flat().every((k) => k === "ramp")).toBe(true);
    const open = await readCell(0, 0, 2);
    expect(open).not.toContain("masked");
    expect(shownValue(open)).toBeGreaterThan(0);
    expect(await page.locator("#golden-note").textContent()).toContain("config differs from the case in causal");

    expect(await rerun(() => page.locator('input[name="causal"]').check())).toBe("done");
    for (let h = 0; h < H; h++) expect(upper(await cellKinds(h)).every((k) => k === "masked")).toBe(true);
    await checkCellsMatchGolden();
  });

  it("taps a clicked node and shows its tensor with min/max/mean", async () => {
    expect(await rerun(() => page.locator('#graph g.node[data-node="masked"]').click())).toBe("done");
    expect(await page.locator("#graph g.node.selected").getAttribute("data-node")).toBe("masked");
    expect(await page.locator("#tensor-head").textContent()).toContain(`masked (mask on cpu) shape [${B}, ${H}, ${L}, ${S}]`);
    // 15 masked cells per head and batch: L·(L−1)/2.
    expect(await page.locator("#tensor-stats").textContent()).toContain(`${B * H * ((L * (L - 1)) / 2)} masked (−∞)`);
    expect(await page.locator("#tensor-table td.masked").count()).toBe((L * (L - 1)) / 2);
    expect(await page.locator('#timings-table tr[data-node="masked"]').count()).toBe(1);
  });

  it("shows a bad config in words and stays usable", async () => {
    const dOut = page.locator('input[name="dOut"]');
    expect(await rerun(() => dOut.fill("7"))).toBe("error");
    expect(await page.locator('#errors p[data-kind="config"]').textContent()).toContain("config.dOut: dOut must be divisible by numHeads");
    expect(await rerun(() => dOut.fill("6"))).toBe("done");
    expect(await page.locator("#errors p").count()).toBe(0);

    await checkCellsMatchGolden();
    expect(pageErrors).toEqual([]);
  });

  it("ablates a clicked head: its weights read zero, the output moves by the max |Δ| shown, a second click restores it", async () => {
    const before = await outputValues();
    expect(before.length).toBeGreaterThan(0);
    expect(await page.locator("#ablation-delta").textContent()).toContain("no head ablated");
    const figure = (h: number) => page.locator(`#heatmaps figure[data-head="${h}"]`);
    expect(await figure(1).getAttribute("data-ablated")).toBe("false");

    // Click head 1's heatmap, as a user would.
    expect(await rerun(() => page.locator('#heatmaps canvas.heatmap[data-head="1"]').click())).toBe("done");
    expect(await figure(1).getAttribute("data-ablated")).toBe("true");
    expect(await figure(1).getAttribute("class")).toContain("ablated");
    expect(await figure(1).locator("figcaption").textContent()).toContain("head 1 · ablated");
    expect(await figure(0).getAttribute("data-ablated")).toBe("false");
    expect(await page.locator("#output-note").textContent()).toBe("head 1 ablated");
    // The tapped weights are the ones readers saw after the override: zeros in head 1, the mask still drawn.
    for (const [i, j] of [[2, 0], [L - 1, L - 1], [1, 1]] as const) expect(await readCell(1, i, j)).toBe(`weights[b=0, h=1, i=${i}, j=${j}] = 0`);
    expect(await readCell(1, 0, 2)).toBe("weights[b=0, h=1, i=0, j=2] = masked (0)");
    // A single attention layer: the other head's pattern does not change.
    const other = await readCell(0, 2, 2);
    expect(Math.abs(shownValue(other) - expectedWeight(0, 0, 2, 2))).toBeLessThanOrEqual(golden.tolerance.abs + golden.tolerance.rel * expectedWeight(0, 0, 2, 2));
    expect(await page.locator("#golden-note").textContent()).toContain("head 1 of weights zeroed: no golden comparison");

    // The output view shows the ablated run, and the line says by how much it moved.
    const after = await outputValues();
    expect(after.length).toBe(before.length);
    const moved = Math.max(...after.map((v, k) => Math.abs(Number(v) - Number(before[k]))));
    expect(moved).toBeGreaterThan(1e-4);
    const line = (await page.locator("#ablation-delta").textContent())!;
    const m = /^ablating head 1 changed output by max \|Δ\| = ([\d.e+-]+) /.exec(line);
    expect(m, line).not.toBeNull();
    const delta = Number(m![1]);
    // The table shows batch 0; the delta is over every batch entry, against the same config run without the ablation.
    expect(delta).toBeGreaterThanOrEqual(moved * (1 - 1e-5) - 1e-6);
    if (B === 1) expect(Math.abs(delta - moved)).toBeLessThanOrEqual(1e-5 * delta + 1e-6);

    // A second click (the head's button this time) restores the output bit for bit.
    expect(await rerun(() => figure(1).locator("button.ablate-head").click())).toBe("done");
    expect(await figure(1).getAttribute("data-ablated")).toBe("false");
    expect(await page.locator("#heatmaps figure.ablated").count()).toBe(0);
    expect(await outputValues()).toEqual(before);
    expect(await page.locator("#ablation-delta").textContent()).toContain("no head ablated");
    await checkCellsMatchGolden();
  });

  it("keeps the ablation while the head count stays and clears it when the count changes", async () => {
    expect(await rerun(() => page.locator('#heatmaps figure[data-head="0"] button.ablate-head').click())).toBe("done");
    // Hkv 2 → 1 (multi-query): still two heads of weights, so head 0 stays ablated.
    expect(await rerun(() => page.locator('input[name="numKvHeads"]').fill("1"))).toBe("done");
    expect(await page.locator('#heatmaps figure[data-head="0"]').getAttribute("data-ablated")).toBe("true");
    expect(await readCell(0, 2, 0)).toBe("weights[b=0, h=0, i=2, j=0] = 0");
    // Three heads: head 0 of this config is another head, so nothing is ablated.
    expect(await rerun(() => page.locator('input[name="numHeads"]').fill("3"))).toBe("done");
    expect(await page.locator("#heatmaps canvas.heatmap").count()).toBe(3);
    expect(await page.locator('#heatmaps figure[data-ablated="true"]').count()).toBe(0);
    expect(await page.locator("#ablation-delta").textContent()).toContain("no head ablated");
    expect(await rerun(() => page.locator('input[name="numHeads"]').fill(String(H)))).toBe("done");
    expect(await rerun(() => page.locator('input[name="numKvHeads"]').fill(String(H)))).toBe("done");
    expect(await page.locator('#heatmaps figure[data-ablated="true"]').count()).toBe(0);
    await checkCellsMatchGolden();
    expect(await page.locator("#errors p").count()).toBe(0);
  });

  it("refuses to diff an executor against itself, in words", async () => {
    await page.selectOption("#diff-reference", "cpu");
    await page.selectOption("#diff-other", "cpu");
    expect(await diffed()).toBe("error");
    expect(await page.locator('#errors p[data-kind="diff"]').textContent()).toBe(
      "Diff executors: pick two different executors: both sides are cpu, and the diff compares one executor with another",
    );
    const webgpu = (await page.locator('#executor-notes li[data-executor="webgpu"]').textContent())!;
    if (webgpu !== "webgpu: available") {
      // Without an adapter the diff says so at once instead of waiting for a device that never comes.
      await page.selectOption("#diff-other", "webgpu");
      expect(await diffed()).toBe("error");
      expect(await page.locator('#errors p[data-kind="diff"]').textContent()).toContain("webgpu: not available here (");
    }
  });

  it("diffs cpu against wasm on every node: every row agrees and the graph's nodes are coloured so", async () => {
    await page.selectOption("#diff-reference", "cpu");
    await page.selectOption("#diff-other", "wasm");
    expect(await diffed()).toBe("done");
    // The successful diff took the earlier diff error away.
    expect(await page.locator("#errors p").count()).toBe(0);
    const nodes = await page.locator("#graph g.node:not(.input)").count();
    expect(nodes).toBeGreaterThan(5);
    expect(await page.locator("#diff-table tr[data-node]").count()).toBe(nodes);
    expect(await page.locator('#diff-table tr[data-status="agree"]').count()).toBe(nodes);
    expect(await page.locator("#graph g.node.diff-agree").count()).toBe(nodes);
    expect(await page.locator("#graph g.node.diff-disagree").count()).toBe(0);
    expect(await page.locator('#diff-table tr[data-node="weights"] td:nth-child(6)').textContent()).toBe("wasm");
    expect(await page.locator("#diff-summary").textContent()).toBe(`wasm against cpu: ${nodes} of ${nodes} nodes agree within abs 0.0001, rel 0.0001`);
    expect(await page.locator("#diff-first").textContent()).toBe("no node disagrees: there is nothing to reproduce");
    expect(await page.locator("#diff-repro").count()).toBe(0);

    // The colours stay on the same graph (a re-run that taps another node), leave with another config, and come back
    // with the same one.
    expect(await rerun(() => page.locator('#graph g.node[data-node="scores"]').click())).toBe("done");
    expect(await page.locator("#graph g.node.diff-agree").count()).toBe(nodes);
    expect(await rerun(() => page.locator('input[name="causal"]').uncheck())).toBe("done");
    expect(await page.locator('#graph g.node[class*="diff-"]').count()).toBe(0);
    expect(await page.locator("#diff-result").getAttribute("class")).toContain("stale");
    expect(await rerun(() => page.locator('input[name="causal"]').check())).toBe("done");
    expect(await page.locator("#graph g.node.diff-agree").count()).toBe(nodes);
    expect(await page.locator("#errors p").count()).toBe(0);
    expect(pageErrors).toEqual([]);
  });

  it("opens the Train tab, which has not started", async () => {
    await page.click("#tab-train");
    expect(await page.locator("#train").isVisible()).toBe(true);
    expect(await page.locator("#inspect").isVisible()).toBe(false);
    expect(await page.locator("#tab-train").getAttribute("aria-selected")).toBe("true");
    expect(await trainStatus()).toMatchObject({ state: "idle", step: 0 });
    expect(await page.locator("#train-steps").inputValue()).toBe("50");
    expect(await page.locator("#train-pause").isDisabled()).toBe(true);
    expect(await page.locator("#train-resume").isDisabled()).toBe(true);
    await expect.poll(() => page.locator('#train-executor option[value="wasm"]').textContent()).toBe("wasm");
  });

  it("trains the copy task on cpu: the loss falls as the CLI's does and the heatmaps change step by step", async () => {
    await trainCopyTask("cpu");
  });

  it("pauses between steps and resumes the same trainer", async () => {
    await startTraining("cpu", 2000);
    const before = await trainUntil(["running"], 5);
    expect(before.step).toBeLessThan(2000);
    await page.click("#train-pause");
    const paused = await trainUntil(["paused"]);
    expect(await page.locator("#train-resume").isEnabled()).toBe(true);
    expect(await page.locator("#train-pause").isDisabled()).toBe(true);
    // Nothing moves while paused: no step, no point, no redraw.
    await page.waitForTimeout(600);
    expect(await trainStatus()).toEqual(paused);
    expect((await chart()).points).toBe(paused.step);
    expect(await page.locator("#train-heatmaps").getAttribute("data-step")).toBe(String(paused.step));
    const first = (await chart()).first;
    expect(Math.abs(first - CLI_LOSS_1)).toBeLessThan(2e-3);

    await page.click("#train-resume");
    const resumed = await trainUntil(["running"], paused.step + 5);
    // The same run goes on: the step count and the curve continue from where they stopped, and the loss keeps falling
    // (a new trainer would start again at step 1, loss 2.34).
    const c = await chart();
    expect(c.first).toBe(first);
    expect(c.points).toBeGreaterThanOrEqual(paused.step + 5);
    expect(resumed.loss).toBeLessThan(paused.loss);

    await page.click("#train-stop");
    const stopped = await trainUntil(["stopped"]);
    expect(stopped.step).toBeLessThan(2000);
    expect(await page.locator("#train-start").textContent()).toBe("Start");
  });

  it("trains on wasm with the same losses", async () => {
    const note = page.locator('#executor-notes li[data-executor="wasm"]');
    expect(await note.textContent()).toBe("wasm: available");
    await trainCopyTask("wasm");
  });

  it("trains on webgpu where the browser has an adapter", async () => {
    const text = (await page.locator('#executor-notes li[data-executor="webgpu"]').textContent())!;
    if (text !== "webgpu: available") {
      expect(await page.locator('#train-executor option[value="webgpu"]').isDisabled()).toBe(true);
      return;
    }
    await startTraining("webgpu", 3);
    const done = await trainUntil(["done", "error"], 0, 120_000);
    expect(await page.locator("#train-errors p").allTextContents()).toEqual([]);
    expect(done).toMatchObject({ state: "done", step: 3 });
    const c = await chart();
    expect(Math.abs(c.first - CLI_LOSS_1)).toBeLessThan(1e-2);
    expect(c.last).toBeLessThan(c.first);
    expect(await page.locator("#train-heatmaps").getAttribute("data-step")).toBe("3");
  });

  it("shows a bad training setting in words", async () => {
    await page.fill("#train-lr", "0");
    await page.click("#train-start");
    expect(await page.locator('#train-errors p[data-kind="config"]').textContent()).toContain("lr: expected a number > 0");
    await page.fill("#train-lr", "0.001");
    await startTraining("cpu", 40);
    expect(await trainUntil(["done"])).toMatchObject({ step: 40 });
    expect(await page.locator("#train-errors p").count()).toBe(0);
    mkdirSync(dirname(TRAIN_SCREENSHOT), { recursive: true });
    await readTrainCell(1, 5, 3);
    await page.screenshot({ path: TRAIN_SCREENSHOT, fullPage: true });
    if (process.env.PLAYGROUND_UPDATE_SCREENSHOT === "1") copyFileSync(TRAIN_SCREENSHOT, join(app, "docs/train.png"));
    expect(pageErrors).toEqual([]);
    await page.click("#tab-inspect");
    expect(await page.locator("#inspect").isVisible()).toBe(true);
  });

  it("saves a screenshot", async () => {
    await readCell(1, 2, 0);
    mkdirSync(dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(existsSync(SCREENSHOT)).toBe(true);
    if (process.env.PLAYGROUND_UPDATE_SCREENSHOT === "1") copyFileSync(SCREENSHOT, join(app, "docs/screenshot.png"));
  });
});
