// diffExecutors on the fixture's attention, cpu against wasm: agreement everywhere as built; a user op whose wasm kernel
// has an off-by-one is named first, its repro replays the disagreement (through JSON, as a file would), and a correct
// kernel replayed on the same repro agrees. Unsupported and failing kernels are reported at their node while the rest
// is still compared.
import { buildAttention } from "@attngraph/attention";
import { createCpuExecutor, type CpuKernel } from "@attngraph/executor-cpu";
import { createWasmExecutor, type WasmKernel } from "@attngraph/executor-wasm";
import { createOpRegistry, insertAfter, type OpGraph } from "@attngraph/graph";
import { Tensor } from "@attngraph/tensor";
import { elementwiseUserOp } from "@attngraph/testkit";
import { describe, expect, it } from "vitest";
import { diffExecutors } from "./diff.js";
import { replayRepro } from "./repro.js";
import { clean, config, weights } from "./test-fixture.js";

// A user op, y = 2x, placed between score and mask.
const registry = createOpRegistry([elementwiseUserOp("double", "2 · x")]);
const graph: OpGraph = insertAfter(buildAttention(config, { registry }), "scores", (b, s) =>
  b.add("double", "scores.doubled", { x: s }),
);
const cpuDouble: CpuKernel = ({ inputs }) => {
  const x = inputs[0]!.contiguous();
  return new Tensor(
    x.data.map((v) => 2 * v),
    x.shape,
  );
};
/** `shift`: element i reads element i + shift (clamped): 0 is right, 1 is the planted off-by-one. */
const wasmDouble =
  (shift: number): WasmKernel =>
  (call, ctx) => {
    const { value: x, temp } = ctx.dense(call.inputs[0]!, call.node);
    const out = ctx.output(call, call.outShape);
    const f = ctx.f32();
    const [xi, oi, n] = [x.address / 4, out.address / 4, x.size];
    for (let i = 0; i < n; i++) f[oi + i] = 2 * f[xi + Math.min(i + shift, n - 1)]!;
    if (temp) ctx.release(x);
    return out;
  };
const cpu = () => {
  const e = createCpuExecutor();
  e.registerKernel("double", cpuDouble);
  return e;
};
const wasm = (kernel?: WasmKernel) => {
  const e = createWasmExecutor();
  if (kernel) e.registerKernel("double", kernel);
  return e;
};
const inputs = { x: clean };

describe("diffExecutors", () => {
  it("cpu and wasm agree on every node of the attention graph", async () => {
    const r = await diffExecutors(buildAttention(config), {
      executors: [createCpuExecutor(), createWasmExecutor()],
      inputs,
      weights,
    });
    expect(r.ok).toBe(true);
    expect(r.first).toBeUndefined();
    expect(r.nodes.map((n) => n.node)).toEqual(buildAttention(config).nodes.map((n) => n.name));
    for (const n of r.nodes) {
      expect(n.against).toHaveLength(1);
      const c = n.against[0]!;
      expect([n.node, c.status, c.ranOn]).toEqual([n.node, "agree", "wasm"]);
      expect(c.maxAbs).toBeLessThan(1e-4);
      expect(c.size).toBe(n.shape.reduce((a, b) => a * b, 1));
    }
  });

  it("names a user op with an off-by-one first, and its repro replays the disagreement", async () => {
    const r = await diffExecutors(graph, { executors: [cpu(), wasm(wasmDouble(1))], inputs, weights });
    expect(r.ok).toBe(false);
    const statuses = Object.fromEntries(r.nodes.map((n) => [n.node, n.against[0]!.status]));
    expect(statuses["scores"]).toBe("agree");
    expect(statuses["scores.doubled"]).toBe("disagree");
    expect(statuses["weights"]).toBe("disagree"); // downstream inherits it: "first" is what tells them apart
    expect(r.first).toMatchObject({ node: "scores.doubled", kind: "double", executor: "wasm", alone: "disagrees" });
    const repro = JSON.parse(JSON.stringify(r.first!.repro));
    expect(repro).toMatchObject({
      format: "attngraph.repro",
      version: 1,
      node: "scores.doubled",
      reference: "cpu",
      executor: "wasm",
    });
    expect(Object.keys(repro.inputs)).toEqual(["scores"]);

    const again = await replayRepro(repro, { executors: [cpu(), wasm(wasmDouble(1))], registry });
    expect(again.reproduced).toBe(true);
    expect(again.comparison.status).toBe("disagree");
    expect(again.sameAsRecorded).toEqual({ cpu: true, wasm: true });
    // The fixed kernel on the same file: the disagreement is gone, and wasm's output is no longer the recorded one.
    const fixed = await replayRepro(repro, { executors: [cpu(), wasm(wasmDouble(0))], registry });
    expect(fixed.reproduced).toBe(false);
    expect(fixed.comparison.status).toBe("agree");
    expect(fixed.sameAsRecorded).toEqual({ cpu: true, wasm: false });
  });

  it("a node the executor has no kernel for runs on the reference and reports unsupported; the rest is compared", async () => {
    const r = await diffExecutors(graph, { executors: [cpu(), wasm()], inputs, weights });
    const node = r.nodes.find((n) => n.node === "scores.doubled")!.against[0]!;
    expect(node).toMatchObject({ status: "unsupported", ranOn: "cpu" });
    expect(node.reason).toMatch(/^unsupported on wasm: /);
    expect(r.nodes.filter((n) => n.against[0]!.status === "agree")).toHaveLength(graph.nodes.length - 1);
    expect(r.ok).toBe(true);
  });

  it("a kernel that throws is 'failed' at its node and 'not-run' after it; the repro records the error", async () => {
    const boom: WasmKernel = () => {
      throw new Error("planted failure");
    };
    const r = await diffExecutors(graph, { executors: [cpu(), wasm(boom)], inputs, weights });
    const status = (n: string) => r.nodes.find((x) => x.node === n)!.against[0]!;
    expect(status("scores").status).toBe("agree");
    expect(status("scores.doubled")).toMatchObject({ status: "failed" });
    expect(status("scores.doubled").reason).toMatch(/planted failure/);
    expect(status("output").status).toBe("not-run");
    expect(r.first).toMatchObject({ node: "scores.doubled", alone: "disagrees" });
    expect(r.first!.repro!.outputs["wasm"]).toEqual({ error: expect.stringMatching(/planted failure/) });
  });

  it("tap none compares the outputs only; a kernel off upstream shows there, and the output node alone agrees", async () => {
    const r = await diffExecutors(graph, { executors: [cpu(), wasm(wasmDouble(1))], inputs, weights, tap: "none" });
    expect(r.nodes.map((n) => n.node)).toEqual(["output"]);
    expect(r.first).toMatchObject({ node: "output", alone: "agrees" });
  });

  it("a list of nodes is compared in graph order; repro: false builds none", async () => {
    const r = await diffExecutors(graph, {
      executors: [cpu(), wasm(wasmDouble(1))],
      inputs,
      weights,
      tap: ["output", "scores.doubled"],
      repro: false,
    });
    expect(r.nodes.map((n) => n.node)).toEqual(["scores.doubled", "output"]);
    expect(r.first).toEqual({ node: "scores.doubled", kind: "double", executor: "wasm", alone: "not-built" });
  });

  it("bad options are typed errors naming the field", async () => {
    const base = { inputs, weights };
    await expect(diffExecutors(graph, { ...base, executors: [cpu()] })).rejects.toThrow(
      /diff\.executors.*two executors or more/,
    );
    await expect(diffExecutors(graph, { ...base, executors: [cpu(), cpu()] })).rejects.toThrow(
      /two executors of the same name.*cpu/,
    );
    await expect(diffExecutors(graph, { ...base, executors: [cpu(), wasm()], tap: ["nope"] })).rejects.toThrow(
      /diff\.tap nope.*no node/,
    );
    await expect(diffExecutors(graph, { ...base, executors: [cpu(), wasm()], tap: ["x"] })).rejects.toThrow(
      /diff\.tap x/,
    );
    await expect(
      diffExecutors(graph, { ...base, executors: [cpu(), wasm()], tolerance: { abs: -1, rel: 0 } }),
    ).rejects.toThrow(/diff\.tolerance\.abs/);
    await expect(diffExecutors(graph, null as never)).rejects.toThrow(/diff options: missing options/);
    await expect(diffExecutors(null as never, { ...base, executors: [cpu(), wasm()] })).rejects.toThrow(
      /diff graph: not a graph/,
    );
    // The reference must run the whole graph: without a kernel for the user op there is nothing to compare against.
    await expect(diffExecutors(graph, { ...base, executors: [wasm(), cpu()] })).rejects.toThrow(
      /reference executor wasm failed/,
    );
  });
});
