// Ops declared by their expressions under the runtime: a user's definePointwiseOp, silu and relu in one graph, run on
// wasm (built-in expressions on their rendered loops, the user's on the interpreter) and on cpu, tapped in the middle
// (a pointwise step's value on the stream like any node's) and in place (the planner lets an output take x's memory).
import { describe, expect, it } from "vitest";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { createOpRegistry, definePointwiseOp, GraphBuilder } from "@attngraph/graph";
import { compile } from "@attngraph/runtime";
import { random, wasmExecutor, worst } from "./test-util.js";

const el = (name: string) => ({ op: "input", name, index: [] });
const softcap = definePointwiseOp({
  kind: "softcap",
  doc: "30 · tanh(x / 30)",
  inputs: [{ name: "x" }],
  expr: { op: "mul", args: [30, { op: "tanh", args: [{ op: "div", args: [el("x"), 30] }] }] },
});

function graph() {
  const b = new GraphBuilder({ registry: createOpRegistry([softcap]) });
  const x = b.input("x", ["B", 37]);
  const act = b.add("silu", "act", { x: b.add("softcap", "capped", { x }) });
  return b.output(b.add("relu", "out", { x: act })).build();
}

describe("pointwise ops in a session", () => {
  it("a user op, silu and relu: wasm gives cpu's numbers, with and without a tap", async () => {
    const x = random([5, 37], 3, 60);
    const onCpu = await compile(graph(), { executors: [createCpuExecutor()] });
    const want = (await onCpu.run({ x })).out!;
    const onWasm = await compile(graph(), { executors: [await wasmExecutor()] });
    expect(worst((await onWasm.run({ x })).out!, want, 1e-6, 1e-6)).toBeLessThanOrEqual(1); // tanh4: a few float32 ulp
    const seen: number[] = [];
    const sub = onWasm.tap("act").subscribe((e) => seen.push(e.tensor.shape[1]!));
    expect(worst((await onWasm.run({ x })).out!, want, 1e-6, 1e-6)).toBeLessThanOrEqual(1); // tanh4: a few float32 ulp
    sub.unsubscribe();
    expect(seen).toEqual([37]);
    expect(onWasm.explain()).toContain("pass pointwise: softcap ×1, silu ×1, relu ×1 as pointwise steps");
    await onWasm.dispose();
    await onCpu.dispose();
  });
});
