// End to end, in Debian's headless Chromium (see playground.e2e.test.ts): the Train tab trains the copy task live on
// cpu and wasm (and webgpu where there is an adapter): the loss falls, the heatmaps change each step, pause and resume
// go on with the same trainer.
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  CLI_LOSS_1,
  TRAIN_SCREENSHOT,
  app,
  chart,
  page,
  pageErrors,
  readTrainCell,
  startTraining,
  trainCopyTask,
  trainStatus,
  trainUntil,
  usePlayground,
} from "./page.js";

usePlayground();

describe("playground training in Chromium", () => {
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
    expect(await page.locator('#train-errors p[data-kind="config"]').textContent()).toContain(
      "lr: expected a number > 0",
    );
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
});
