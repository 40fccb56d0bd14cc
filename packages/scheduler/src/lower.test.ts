import { buildAttention } from "@attngraph/attention";
import { createOpRegistry, defineOp, GraphBuilder, GraphValidationError } from "@attngraph/graph";
import { AttnGraphError } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { explain } from "./explain.js";
import { lower } from "./lower.js";
import { fakeExecutor } from "./test-executors.js";

const config = { dIn: 8, dOut: 8, numHeads: 2, causal: true, window: 3 };

describe("lower", () => {
  it("keeps the graph's topological order and passes inputs in the op's declared order", () => {
    const graph = buildAttention(config, { keyPaddingMask: true });
    const plan = lower(graph, { executors: [fakeExecutor("cpu", "all")] });
    expect(plan.steps.map((s) => s.node)).toEqual(graph.nodes.map((n) => n.name));
    const mask = plan.steps.find((s) => s.kind === "mask")!;
    expect(mask.inputs).toEqual(["scores", "keyPaddingMask", undefined, undefined]); // the user mask and bias slots are empty
    const proj = plan.steps.find((s) => s.node === "queries")!;
    expect(proj.inputs).toEqual(["x", "W_query", undefined]);
  });

  it("an unfilled optional slot named like an Object.prototype member is absent (own keys only)", () => {
    const op = defineOp<Record<string, never>>({
      kind: "shift",
      doc: "x (+ valueOf)",
      inputs: [{ name: "x" }, { name: "valueOf", optional: true }],
      attrs: {},
      inferShape: ([x]) => x!,
    });
    const b = new GraphBuilder({ registry: createOpRegistry([op]) });
    const graph = b.output(b.add("shift", "shifted", { x: b.input("x", [2]) })).build();
    const plan = lower(graph, { executors: [fakeExecutor("cpu", "all")] });
    expect(plan.steps[0]!.inputs).toEqual(["x", undefined]);
  });

  it("plans head splits as views and the head merge of a transposed view as a copy", () => {
    const plan = lower(buildAttention(config), { executors: [fakeExecutor("cpu", "all")] });
    const layout = Object.fromEntries(plan.steps.map((s) => [s.node, s.layout]));
    expect(layout["q.split"]).toBe("view");
    expect(layout["q.heads"]).toBe("view");
    expect(layout["context.merge"]).toBe("view");
    expect(layout["context"]).toBe("copy");
    expect(layout["scores"]).toBe("compute");
  });

  it("places each node on the first executor that supports it and says why it fell back", () => {
    const gpu = fakeExecutor("webgpu", "all", { mask: "window unsupported" });
    const plan = lower(buildAttention(config), { executors: [gpu, fakeExecutor("cpu", "all")] });
    const mask = plan.steps.find((s) => s.kind === "mask")!;
    expect(mask.placement).toEqual({ executor: "cpu", how: "fallback", skipped: ["webgpu: window unsupported"] });
    expect(plan.steps.find((s) => s.node === "scores")!.placement.executor).toBe("webgpu");
    expect(explain(plan)).toContain("placement: masked → cpu (webgpu: window unsupported)");
  });

  it("keeps a view on its input's executor", () => {
    const plan = lower(buildAttention(config), {
      executors: [fakeExecutor("a", "all"), fakeExecutor("b", "all")],
      placement: { queries: "b" },
    });
    expect(plan.steps.find((s) => s.node === "q.split")!.placement).toMatchObject({
      executor: "b",
      how: "follows-input",
    });
    expect(plan.steps.find((s) => s.node === "keys")!.placement.executor).toBe("a");
  });

  it("honours per-node overrides and refuses an override the executor cannot run", () => {
    const executors = [fakeExecutor("cpu", "all"), fakeExecutor("wasm", ["projection", "reshape", "transpose"])];
    const plan = lower(buildAttention(config), { executors, placement: { queries: "wasm" } });
    expect(plan.steps.find((s) => s.node === "queries")!.placement).toMatchObject({
      executor: "wasm",
      how: "override",
    });
    expect(() => lower(buildAttention(config), { executors, placement: { scores: "wasm" } })).toThrow(
      /unsupported: op score on executor wasm/,
    );
  });

  it("reports a node no executor supports as unsupported, naming op, node and executors", () => {
    const err = (() => {
      try {
        lower(buildAttention(config), {
          executors: [fakeExecutor("cpu", "all", { softmax: "no kernel for op softmax" })],
        });
      } catch (e) {
        return e;
      }
    })();
    expect(AttnGraphError.isInstance(err) && err.code).toBe("unsupported");
    expect((err as Error).message).toMatch(
      /^unsupported: op softmax on executor cpu \(node weights: cpu: no kernel for op softmax\)/,
    );
  });

  it("rejects bad executor lists and placements with errors naming the field", () => {
    const graph = buildAttention(config);
    expect(() => lower(graph, { executors: [] })).toThrow(GraphValidationError);
    expect(() => lower(graph, { executors: [fakeExecutor("cpu", "all"), fakeExecutor("cpu", "all")] })).toThrow(
      /two executors share a name/,
    );
    expect(() => lower(graph, { executors: [fakeExecutor("cpu", "all")], placement: { nope: "cpu" } })).toThrow(
      /placement.nope/,
    );
    expect(() => lower(graph, { executors: [fakeExecutor("cpu", "all")], placement: { scores: "gpu" } })).toThrow(
      /placement.scores: no executor with this name/,
    );
    const v2 = { ...fakeExecutor("x", "all"), specVersion: 2 } as never;
    expect(() => lower(graph, { executors: [v2] })).toThrow(/unsupported contract version/);
  });

  it("records the last step that reads each value, outputs living to the end", () => {
    const plan = lower(buildAttention(config), { executors: [fakeExecutor("cpu", "all")] });
    const idx = (n: string) => plan.steps.findIndex((s) => s.node === n);
    expect(plan.lastUse.get("scores")).toBe(idx("masked"));
    expect(plan.lastUse.get("x")).toBe(idx("values"));
    expect(plan.lastUse.get("output")).toBe(plan.steps.length);
  });

  it("explain() lists every step with op, executor, layout and shape", () => {
    const text = explain(lower(buildAttention(config), { executors: [fakeExecutor("cpu", "all")] }));
    expect(text).toMatch(/^plan: 16 steps on cpu/);
    expect(text).toMatch(/scores\s+score\s+cpu\s+compute\s+\[B, 2, T, T\]\s+q\.heads, k\.heads/);
    expect(text).toContain("copies at context (input is a strided view");
    expect(text).toContain("input   x [B, T, 8]");
    expect(text).not.toContain("executor cpu:");
  });

  it("explain() prints the line an executor describes itself with, for each executor the plan uses", () => {
    const wasm = {
      ...fakeExecutor("wasm", "all"),
      describe: () => "simd flavour, 1 thread (2 asked for: no SharedArrayBuffer)",
    };
    const unused = { ...fakeExecutor("gpu", ["projection"]), describe: () => "never shown" };
    const text = explain(lower(buildAttention(config), { executors: [wasm, unused] }));
    expect(text.split("\n")[1]).toBe("executor wasm: simd flavour, 1 thread (2 asked for: no SharedArrayBuffer)");
    expect(text).not.toContain("never shown");
  });
});
