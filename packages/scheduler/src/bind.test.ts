import { buildAttention } from "@attngraph/attention";
import { GraphBuilder } from "@attngraph/graph";
import { describe, expect, it } from "vitest";
import { InputError, resolveShapes } from "./bind.js";
import { lower } from "./lower.js";
import { fakeExecutor } from "./test-executors.js";

const weights = { W_query: [8, 8], W_key: [8, 8], W_value: [8, 8], out_proj: [8, 8], out_bias: [8] };
const plan = lower(buildAttention({ dIn: 8, dOut: 8, numHeads: 2, causal: true }, { keyPaddingMask: true }), {
  executors: [fakeExecutor("cpu", "all")],
});

describe("resolveShapes", () => {
  it("binds symbolic dims and gives every value a concrete shape", () => {
    const shapes = resolveShapes(plan, { x: [3, 5, 8], keyPaddingMask: [3, 5] }, weights);
    expect(shapes.get("scores")).toEqual([3, 2, 5, 5]);
    expect(shapes.get("q.split")).toEqual([3, 5, 2, 4]);
    expect(shapes.get("output")).toEqual([3, 5, 8]);
  });

  it("names the input and dim when a run's shapes do not fit", () => {
    expect(() => resolveShapes(plan, { x: [3, 5, 7], keyPaddingMask: [3, 5] }, weights)).toThrow(
      /input x: wrong size of dim 2, expected \[B, T, 8\], got \[3, 5, 7\]/,
    );
    expect(() => resolveShapes(plan, { x: [3, 5], keyPaddingMask: [3, 5] }, weights)).toThrow(/input x: wrong rank/);
    expect(() => resolveShapes(plan, { x: [3, 5, 8], keyPaddingMask: [2, 5] }, weights)).toThrow(
      /input keyPaddingMask: dim 0 \(B\) disagrees with input x, expected B=3, got B=2/,
    );
    expect(() => resolveShapes(plan, { x: [3, 5, 8] }, weights)).toThrow(/input keyPaddingMask: missing input/);
    expect(() => resolveShapes(plan, { x: [3, 5, 8], keyPaddingMask: [3, 5], y: [1] }, weights)).toThrow(
      /input y: unknown input/,
    );
    expect(() => resolveShapes(plan, { x: [3, 5, 8], keyPaddingMask: [3, 5] }, { ...weights, out_bias: [7] })).toThrow(
      InputError,
    );
  });

  it("binds symbolic dims in every attribute of type dims (reshape's shape, sum-to's), naming the attribute when unbound", () => {
    const b = new GraphBuilder();
    const x = b.input("x", ["B", 2, 3, "T", 4]);
    const s = b.add("sum-to", "s", { x }, { shape: ["B", 2, 1, "T", 4] });
    const r = b.add("reshape", "r", { x: s }, { shape: ["B", 2, "T", 4] });
    const p = lower(b.output(r).build(), { executors: [fakeExecutor("cpu", "all")] });
    const shapes = resolveShapes(p, { x: [5, 2, 3, 7, 4] }, {});
    expect([shapes.get("s"), shapes.get("r")]).toEqual([
      [5, 2, 1, 7, 4],
      [5, 2, 7, 4],
    ]);
    const b2 = new GraphBuilder();
    const y = b2.input("y", ["B", 4]);
    const p2 = lower(b2.output(b2.add("sum-to", "s2", { x: y }, { shape: ["N", 4] })).build(), {
      executors: [fakeExecutor("cpu", "all")],
    });
    expect(() => resolveShapes(p2, { y: [2, 4] }, {})).toThrow(/s2\.shape: dim N is bound by no input/);
  });
});
