// The playground under test: the built page served from 127.0.0.1 in Debian's Chromium, and the readings both
// end-to-end files take of it (runs, cells, the executor diff, the training chart).
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, expect } from "vitest";
import { MASKED_RGB } from "../src/colormap.js";
import { serve, type Served } from "@attngraph/static-server";

export const here = dirname(fileURLToPath(import.meta.url));
export const app = join(here, "..");
export const dist = join(app, "dist");
export const CHROMIUM = "/usr/bin/chromium";
export const CASE = join(app, "../../packages/testkit/golden/seed-002-mha-outproj-eval.json");
export const SCREENSHOT = join(app, "artifacts/playground.png");
export const TRAIN_SCREENSHOT = join(app, "artifacts/playground-train.png");
// `attngraph train copy --executor cpu` (seed 3, lr 0.001): the loss of step 1, and of step 30.
export const CLI_LOSS_1 = 2.3379;
export const CLI_LOSS_30 = 0.5987;

export interface JsonTensor {
  shape: number[];
  data: number[];
}
export const golden = JSON.parse(readFileSync(CASE, "utf8")) as {
  name: string;
  expected: { weights: JsonTensor };
  tolerance: { abs: number; rel: number };
};
export const [B, H, L, S] = golden.expected.weights.shape as [number, number, number, number];
export const expectedWeight = (b: number, h: number, i: number, j: number) =>
  golden.expected.weights.data[((b * H + h) * L + i) * S + j]!;

export let server: Served;
export let browser: Browser;
export let page: Page;
export const pageErrors: string[] = [];

/** Registers the hooks that serve the built page, start Chromium and open the page (before all), and close them. */
export function usePlayground(): void {
  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `${CHROMIUM} is missing: install Debian's chromium (apt-get update && apt-get install -y chromium); this test never downloads a browser`,
      );
    }
    if (!existsSync(join(dist, "index.html")))
      throw new Error(`${dist}/index.html is missing: run \`vite build\` first (the package's test script does)`);
    server = await serve(dist);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--enable-unsafe-webgpu",
      ],
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
}

/** The number of the last settled run. */
export async function seq(): Promise<number> {
  return Number(await page.locator("#status").getAttribute("data-seq"));
}

/**
 * Waits until a run after `after` has settled, and returns its state ("done" or "error"). The first run on an executor
 * compiles its kernels (webgpu: WGSL pipelines on SwiftShader's CPU Vulkan), which on 2 cores shared with the rest of
 * `pnpm test` can take far longer than a warm run: such a run gets a longer `timeout`.
 */
export async function settled(after: number, timeout = 60_000): Promise<string> {
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
export async function rerun(action: () => Promise<unknown>, timeout?: number): Promise<string> {
  const before = await seq();
  await action();
  return settled(before, timeout);
}

/** Hovers cell (i, j) of a head's heatmap the way a user would, and returns what the readout then says. */
export async function readCell(h: number, i: number, j: number): Promise<string> {
  const canvas = page.locator(`#heatmaps canvas.heatmap[data-head="${h}"]`);
  const cell = Number(await canvas.getAttribute("data-cell"));
  await canvas.hover({ position: { x: (j + 0.5) * cell, y: (i + 0.5) * cell } });
  return (await page.locator("#cell-readout").textContent())!;
}

export function shownValue(readout: string): number {
  const m = /= (-?[\d.e+-]+)$/.exec(readout);
  if (!m) throw new Error(`the readout shows no number: "${readout}"`);
  return Number(m[1]);
}

/** The colour drawn at the centre of each cell of one head's canvas: "masked" or "ramp". */
export async function cellKinds(h: number): Promise<string[][]> {
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

export const upper = (kinds: string[][]) => kinds.flatMap((row, i) => row.filter((_, j) => j > i));
export const lowerAndDiag = (kinds: string[][]) => kinds.flatMap((row, i) => row.filter((_, j) => j <= i));

export async function checkCellsMatchGolden(): Promise<void> {
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
export async function outputValues(): Promise<string[]> {
  return page.locator("#output-table td").evaluateAll((tds) => tds.map((td) => (td as HTMLElement).dataset.value!));
}

/** Presses "Run diff" and waits for that diff to settle; returns "done" or "error". */
export async function diffed(): Promise<string> {
  const status = page.locator("#diff-status");
  const before = Number(await status.getAttribute("data-seq"));
  await page.click("#diff-run");
  await page.waitForFunction((n) => Number(document.getElementById("diff-status")!.dataset.seq) > n, before);
  return (await status.getAttribute("data-state"))!;
}

export interface TrainStatus {
  state: string;
  step: number;
  loss: number;
}

export async function trainStatus(): Promise<TrainStatus> {
  return page.locator("#train-status").evaluate((s: HTMLElement) => ({
    state: s.dataset.state!,
    step: Number(s.dataset.step),
    loss: Number(s.dataset.loss),
  }));
}

/** Waits until the training status is in one of `states` with at least `minStep` steps done. */
export async function trainUntil(states: string[], minStep = 0, timeout = 60_000): Promise<TrainStatus> {
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
export async function chart(): Promise<{ points: number; first: number; last: number; polyline: number }> {
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
export async function recordTrainDraws(): Promise<() => Promise<{ step: number; pixels: string }[]>> {
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
          for (let j = 0; j < Number(c.dataset.cols); j++)
            cells.push(
              ...ctx.getImageData(Math.floor((j + 0.5) * px), Math.floor((i + 0.5) * px), 1, 1).data.slice(0, 3),
            );
        }
        return cells.join(",");
      });
      w.trainDraws.push({ step: Number(box.dataset.step), pixels: pixels.join("|") });
    });
    w.trainObserver.observe(box, { attributes: true, attributeFilter: ["data-step"] });
  });
  return () =>
    page.evaluate(() => (window as unknown as { trainDraws: { step: number; pixels: string }[] }).trainDraws);
}

export async function startTraining(executor: string, steps: number): Promise<void> {
  await page.selectOption("#train-executor", executor);
  await page.fill("#train-steps", String(steps));
  await page.fill("#train-lr", "0.001");
  await page.fill("#train-seed", "3");
  await page.click("#train-start");
}

/** Trains 30 steps on `executor` to the end, checking the curve, the heatmaps and the losses against the CLI's. */
export async function trainCopyTask(executor: string): Promise<void> {
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

export async function readTrainCell(h: number, i: number, j: number): Promise<string> {
  const canvas = page.locator(`#train-heatmaps canvas.heatmap[data-head="${h}"]`);
  const cell = Number(await canvas.getAttribute("data-cell"));
  await canvas.hover({ position: { x: (j + 0.5) * cell, y: (i + 0.5) * cell } });
  return (await page.locator("#train-readout").textContent())!;
}
