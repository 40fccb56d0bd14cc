// End to end, in Debian's headless Chromium driven by playwright-core (never a downloaded browser): the built page is
// served from 127.0.0.1, the seed multi-head golden case is loaded through the page's file input, and the numbers the
// page shows are checked against the case's expected values. Fails (never skips) when Chromium or the build is missing.
import { copyFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MASKED_RGB } from "../src/colormap.js";
import { serve, type Served } from "./serve.js";

const here = dirname(fileURLToPath(import.meta.url));
const app = join(here, "..");
const dist = join(app, "dist");
const CHROMIUM = "/usr/bin/chromium";
const CASE = join(app, "../../packages/testkit/golden/seed-002-mha-outproj-eval.json");
const SCREENSHOT = join(app, "artifacts/playground.png");

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
  page.setDefaultTimeout(20_000);
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

/** Waits until a run after `after` has settled, and returns its state ("done" or "error"). */
async function settled(after: number): Promise<string> {
  await page.waitForFunction((n) => {
    const s = document.getElementById("status")!;
    return Number(s.dataset.seq) > n && (s.dataset.state === "done" || s.dataset.state === "error");
  }, after);
  return (await page.locator("#status").getAttribute("data-state"))!;
}

/** Does something that re-runs, and waits for that run. */
async function rerun(action: () => Promise<unknown>): Promise<string> {
  const before = await seq();
  await action();
  return settled(before);
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
      expect(await rerun(() => page.selectOption("#executor", "webgpu"))).toBe("done");
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

  it("saves a screenshot", async () => {
    await readCell(1, 2, 0);
    mkdirSync(dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(existsSync(SCREENSHOT)).toBe(true);
    if (process.env.PLAYGROUND_UPDATE_SCREENSHOT === "1") copyFileSync(SCREENSHOT, join(app, "docs/screenshot.png"));
  });
});
