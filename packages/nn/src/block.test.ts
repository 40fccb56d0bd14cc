import { createCpuExecutor } from "@attngraph/executor-cpu";
import { GraphBuilder, GraphValidationError } from "@attngraph/graph";
import { compile } from "@attngraph/runtime";
import { compare, Tensor, type Tensor as T } from "@attngraph/tensor";
import { goldenTrainDir, loadAnyCase, type TrainCase } from "@attngraph/testkit";
import { thrownError } from "@attngraph/testkit/test-helpers";
import { describe, expect, it } from "vitest";
import { addTransformerBlock, transformerBlock } from "./block.js";
import { loadStateDict, StateDictError } from "./state-dict.js";

const blockCase = loadAnyCase(`${goldenTrainDir}/block-causal-b2-t10-e16-h4.json`).case as TrainCase;

describe("transformerBlock", () => {
  it("has the worked example's node names and state_dict weight names", () => {
    const g = transformerBlock({ embedDim: 16, nHeads: 4 }, { mask: true });
    for (const n of [
      "ln1",
      "attention",
      "attention.weights",
      "residual",
      "ln2",
      "mlp.hidden",
      "mlp.gelu",
      "mlp",
      "output",
    ])
      expect(g.has(n), n).toBe(true);
    expect(g.weights.map((w) => w.name).sort()).toEqual(Object.keys(blockCase.params).sort());
    expect(g.outputs).toEqual(["output"]);
  });

  it("reproduces every intermediate of the golden block case on cpu, loaded from its state_dict", async () => {
    const g = transformerBlock(blockCase.config as never, { mask: true });
    const session = await compile(g, { executors: [createCpuExecutor()], weights: loadStateDict(g, blockCase.params) });
    const got = new Map<string, T>();
    const names: Record<string, string> = { weights: "attention.weights" };
    session.tap(Object.keys(blockCase.expected).map((n) => names[n] ?? n)).subscribe((e) => got.set(e.node, e.tensor));
    await session.run({ x: blockCase.inputs["x"]!, mask: blockCase.inputs["mask"]! });
    for (const [n, want] of Object.entries(blockCase.expected)) {
      const r = compare(got.get(names[n] ?? n)!, want, blockCase.tolerance);
      expect(r.ok, `${n}: worst ${JSON.stringify(r.worst)}`).toBe(true);
    }
    await session.dispose();
  });

  it("a state_dict that does not fit lists every missing, unexpected and mis-shaped key at once", () => {
    const g = transformerBlock({ embedDim: 16, nHeads: 4 });
    const { ["ln1.bias"]: _dropped, ...rest } = blockCase.params;
    const bad = { ...rest, "ln2.weight": Tensor.zeros([15]), "extra.weight": Tensor.zeros([2]) };
    const err = thrownError(() => loadStateDict(g, bad));
    expect(err).toBeInstanceOf(StateDictError);
    const e = err as StateDictError;
    expect(e.missing).toEqual(["ln1.bias"]);
    expect(e.unexpected).toEqual(["extra.weight"]);
    expect(e.misShaped).toEqual([{ key: "ln2.weight", expected: "[16]", got: "[15]" }]);
    expect(e.message).toMatch(
      /missing ln1.bias; unexpected extra.weight; wrong shape ln2.weight \(expected \[16\], got \[15\]\)/,
    );
  });

  it("fused (linear-gelu, add-layer-norm) and unfused runs agree with the golden block; residual and ln2 tapped from the fused plan too", async () => {
    const g = transformerBlock(blockCase.config as never, { mask: true });
    const inputs = { x: blockCase.inputs["x"]!, mask: blockCase.inputs["mask"]! };
    const fused = await compile(g, { executors: [createCpuExecutor()], weights: loadStateDict(g, blockCase.params) });
    expect(fused.plan.steps.map((s) => s.kind)).toEqual(expect.arrayContaining(["linear-gelu", "add-layer-norm"]));
    const untapped = await fused.run(inputs);
    expect(compare(untapped["output"]!, blockCase.expected["output"]!, blockCase.tolerance).ok).toBe(true);
    const got = new Map<string, T>();
    fused.tap(["residual", "ln2"]).subscribe((e) => got.set(e.node, e.tensor));
    const tapped = await fused.run(inputs);
    expect(fused.explain({ watched: ["residual", "ln2"] })).toContain("add-layer-norm");
    for (const n of ["residual", "ln2"])
      expect(compare(got.get(n)!, blockCase.expected[n]!, blockCase.tolerance).ok, n).toBe(true);
    expect(tapped["output"]!.toArray()).toEqual(untapped["output"]!.toArray());
    await fused.dispose();
  });

  it("options that are null or not an object are a typed error naming the function, not a TypeError", () => {
    expect(() => transformerBlock({ embedDim: 4, nHeads: 1 }, null as never)).toThrow(
      /^transformerBlock options: options must be an object, expected \{ mask\?, .*got null$/,
    );
    const b = new GraphBuilder();
    expect(() =>
      addTransformerBlock(b, b.input("x", ["B", "T", 4]), { embedDim: 4, nHeads: 1 }, "transformer.0" as never),
    ).toThrow(GraphValidationError);
  });

  it("takes any attention variant: GQA with a sliding window and RoPE, key padding; fused and fully tapped runs agree", async () => {
    const g = transformerBlock(
      { embedDim: 16, nHeads: 4, causal: true, attention: { numKvHeads: 2, window: 3 }, position: { kind: "rope" } },
      { keyPaddingMask: true },
    );
    expect(g.has("attention.q.rope") && g.shapeOf("attention.keys")).toEqual(["B", "T", 8]);
    const weights = Object.fromEntries(
      g.weights.map((w, k) => [
        w.name,
        Tensor.from(
          Array.from({ length: (w.shape as number[]).reduce((a, d) => a * d, 1) }, (_, i) => Math.sin(i * 0.37 + k)),
          w.shape as number[],
        ),
      ]),
    );
    const s = await compile(g, { executors: [createCpuExecutor()], weights });
    const x = Tensor.from(
      Array.from({ length: 2 * 5 * 16 }, (_, i) => Math.cos(i * 0.11)),
      [2, 5, 16],
    );
    const keyPaddingMask = Tensor.from([0, 0, 0, 0, 1, 0, 0, 0, 0, 0], [2, 5]);
    const fused = await s.run({ x, keyPaddingMask });
    const sub = s.tap(() => true).subscribe();
    const unfused = await s.run({ x, keyPaddingMask });
    sub.unsubscribe();
    const r = compare(unfused["output"]!, fused["output"]!, { abs: 1e-5, rel: 1e-5 });
    expect(r.ok, JSON.stringify(r.worst)).toBe(true);
    expect(fused["output"]!.toArray().every(Number.isFinite)).toBe(true);
    await s.dispose();
  });
});
