// End to end, in Debian's headless Chromium driven by playwright-core (never a downloaded browser): the built page is
// served from 127.0.0.1, the seed multi-head golden case is loaded through the page's file input, and the numbers the
// page shows are checked against the case's expected values. In the Inspect tab a clicked head is ablated and restored,
// and the executor diff of cpu against wasm agrees on every node (training: train.e2e.test.ts). Fails (never skips)
// when Chromium or the build is missing.
import { copyFileSync, existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  B,
  CASE,
  H,
  L,
  S,
  SCREENSHOT,
  app,
  cellKinds,
  checkCellsMatchGolden,
  diffed,
  expectedWeight,
  golden,
  lowerAndDiag,
  outputValues,
  page,
  pageErrors,
  readCell,
  rerun,
  shownValue,
  upper,
  usePlayground,
} from "./page.js";

usePlayground();

describe("playground in Chromium", () => {
  it("starts with a random-weight run on cpu and says which executors are not available here", async () => {
    expect(await page.locator("#status").getAttribute("data-state")).toBe("done");
    await expect
      .poll(() => page.locator('#executor-notes li[data-executor="cpu"]').textContent())
      .toBe("cpu: available");
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
    const executors = await page
      .locator("#graph g.node:not(.input)")
      .evaluateAll((gs) => gs.map((g) => g.getAttribute("data-executor")));
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
    const executors = await page
      .locator("#graph g.node:not(.input)")
      .evaluateAll((gs) => gs.map((g) => g.getAttribute("data-executor")));
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
      const executors = await page
        .locator("#graph g.node:not(.input)")
        .evaluateAll((gs) => gs.map((g) => g.getAttribute("data-executor")));
      expect(executors).toContain("webgpu");
      await checkCellsMatchGolden();
    } else {
      expect(text).toMatch(/^webgpu: not available here \(.+\)$/);
      expect(await rerun(() => page.selectOption("#executor", "webgpu"))).toBe("error");
      expect(await page.locator('#errors p[data-kind="executor"]').textContent()).toContain(
        "webgpu: not available here (",
      );
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
    expect(await page.locator("#tensor-head").textContent()).toContain(
      `masked (mask on cpu) shape [${B}, ${H}, ${L}, ${S}]`,
    );
    // 15 masked cells per head and batch: L·(L−1)/2.
    expect(await page.locator("#tensor-stats").textContent()).toContain(`${B * H * ((L * (L - 1)) / 2)} masked (−∞)`);
    expect(await page.locator("#tensor-table td.masked").count()).toBe((L * (L - 1)) / 2);
    expect(await page.locator('#timings-table tr[data-node="masked"]').count()).toBe(1);
  });

  it("shows a bad config in words and stays usable", async () => {
    const dOut = page.locator('input[name="dOut"]');
    expect(await rerun(() => dOut.fill("7"))).toBe("error");
    expect(await page.locator('#errors p[data-kind="config"]').textContent()).toContain(
      "config.dOut: dOut must be divisible by numHeads",
    );
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
    for (const [i, j] of [
      [2, 0],
      [L - 1, L - 1],
      [1, 1],
    ] as const)
      expect(await readCell(1, i, j)).toBe(`weights[b=0, h=1, i=${i}, j=${j}] = 0`);
    expect(await readCell(1, 0, 2)).toBe("weights[b=0, h=1, i=0, j=2] = masked (0)");
    // A single attention layer: the other head's pattern does not change.
    const other = await readCell(0, 2, 2);
    expect(Math.abs(shownValue(other) - expectedWeight(0, 0, 2, 2))).toBeLessThanOrEqual(
      golden.tolerance.abs + golden.tolerance.rel * expectedWeight(0, 0, 2, 2),
    );
    expect(await page.locator("#golden-note").textContent()).toContain(
      "head 1 of weights zeroed: no golden comparison",
    );

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
    expect(await page.locator("#diff-summary").textContent()).toBe(
      `wasm against cpu: ${nodes} of ${nodes} nodes agree within abs 0.0001, rel 0.0001`,
    );
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

  it("saves a screenshot", async () => {
    await readCell(1, 2, 0);
    mkdirSync(dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(existsSync(SCREENSHOT)).toBe(true);
    if (process.env.PLAYGROUND_UPDATE_SCREENSHOT === "1") copyFileSync(SCREENSHOT, join(app, "docs/screenshot.png"));
  });
});
