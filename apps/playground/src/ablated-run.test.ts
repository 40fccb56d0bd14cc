// The ablated run on the real cpu executor (no browser): the zeroed head's weights read back as zeros, the other head's
// are untouched (a single attention layer: nothing downstream feeds back into them), the output moves by the reported
// max |Δ|, and with every head zeroed only the output projection's bias is left.
import { buildAttention, normalizeConfig } from "@attngraph/attention";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { compile, type Session } from "@attngraph/runtime";
import type { Tensor } from "@attngraph/tensor";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ABLATED_NODE, ablatedRun } from "./ablated-run.js";
import { maxAbsDelta } from "./ablation-state.js";
import { runInputs } from "./inputs.js";
import { builderOptions, defaultConfig } from "./playground-config.js";

const config = normalizeConfig(defaultConfig.attention);
const data = runInputs(config, defaultConfig, undefined);
const graph = buildAttention(config, builderOptions(defaultConfig, false));
const watched = ["weights", "masked"];
const signal = new AbortController().signal;
let session: Session;

beforeAll(async () => {
  session = await compile(graph, { executors: [createCpuExecutor()], weights: data.weights });
});
afterAll(() => session.dispose());

/** Head `h` of batch 0 of a [B, H, L, S] tensor. */
function head(t: Tensor, h: number): number[] {
  const [, , L, S] = t.shape as [number, number, number, number];
  return Array.from(t.toFloat32Array().subarray(h * L * S, (h + 1) * L * S));
}

describe("ablatedRun", () => {
  it("runs once, unablated, with no heads", async () => {
    const r = await ablatedRun(session, data.inputs, watched, [], signal);
    expect(r.outputDelta).toBeUndefined();
    expect(head(r.tapped.get(ABLATED_NODE)!, 1).some((v) => v > 0)).toBe(true);
    expect(r.timings.length).toBeGreaterThan(0);
  });

  it("zeroes the ablated head in the tapped weights, leaves the other head alone and reports the output's change", async () => {
    const plain = await ablatedRun(session, data.inputs, watched, [], signal);
    const r = await ablatedRun(session, data.inputs, watched, [1], signal);
    const w = r.tapped.get(ABLATED_NODE)!;
    expect(head(w, 1).every((v) => v === 0)).toBe(true);
    expect(head(w, 0)).toEqual(head(plain.tapped.get(ABLATED_NODE)!, 0));
    // The mask is upstream of the override: its −∞ cells are still there for the heatmap to grey out.
    expect(
      r.tapped
        .get("masked")!
        .toFloat32Array()
        .some((v) => v === -Infinity),
    ).toBe(true);
    const moved = maxAbsDelta(r.outputs.output!.toFloat32Array(), plain.outputs.output!.toFloat32Array());
    expect(r.outputDelta).toBeGreaterThan(1e-3);
    expect(Math.abs(r.outputDelta! - moved)).toBeLessThan(1e-6);
    // The timings are the shown (ablated) run's alone, not both runs'.
    expect(r.timings.length).toBe(plain.timings.length);
  });

  it("leaves only the output bias when every head is zeroed", async () => {
    const r = await ablatedRun(session, data.inputs, watched, [0, 1], signal);
    const bias = Array.from(data.weights.out_bias!.toFloat32Array());
    const out = r.outputs.output!;
    const E = out.shape.at(-1)!;
    const rows = out.toFloat32Array();
    for (let i = 0; i < rows.length; i += E) expect(Array.from(rows.subarray(i, i + E))).toEqual(bias);
  });

  it("fails the run, naming the node, for a head the config does not have", async () => {
    await expect(ablatedRun(session, data.inputs, watched, [2], signal)).rejects.toThrow(
      /override of node weights: .*expected an integer in \[0, 2\), got 2/,
    );
  });
});
