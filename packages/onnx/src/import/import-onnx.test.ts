// The golden-models ONNX cases (nanoGPT exported by torch.onnx.export) imported, run on the cpu executor and compared
// with PyTorch's logits; what the import says about them (attention chains, folds) and what tapping its names gives.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { compile } from "@attngraph/runtime";
import { compare, Tensor, type AnyTensor } from "@attngraph/tensor";
import { goldenModelsDir, goldenModelsExtraDir, listCases, parseModelCase, type ModelCase } from "@attngraph/testkit";
import { importOnnx } from "./import-onnx.js";

const onnxCases = [goldenModelsDir, goldenModelsExtraDir].flatMap((dir) =>
  listCases(dir)
    .map((file) => parseModelCase(JSON.parse(readFileSync(file, "utf8")), file))
    .filter((c) => c.onnx !== undefined)
    .map((c) => [c.name, c, dir] as const),
);

function importCase(c: ModelCase, dir: string) {
  return importOnnx(readFileSync(join(dir, c.onnx!)), {
    shapes: Object.fromEntries(Object.entries(c.inputs).map(([k, t]) => [k, t.shape])),
  });
}

describe("golden-models ONNX files imported", () => {
  it("finds the public case and the extra exports", () => {
    expect(onnxCases.map(([n]) => n)).toContain("nanogpt-onnx-l1");
    expect(onnxCases.length).toBeGreaterThanOrEqual(4);
  });

  it.each(onnxCases)(
    "%s: PyTorch's logits on cpu, attention as score → mask → softmax → weighted-sum",
    async (_name, c, dir) => {
      const imported = importCase(c, dir);
      const layers = (c.config!["n_layer"] as number) ?? 1;
      expect(imported.report.chains).toHaveLength(layers);
      expect(imported.report.chains.every((ch) => ch.mask === "causal top-left")).toBe(true);
      expect(imported.report.patterns["gelu"]).toBe(layers);
      const session = await compile(imported.graph, { executors: [createCpuExecutor()], weights: imported.weights });
      try {
        expect(session.explain()).toMatch(/attention \(fused\)/);
        const weights: { node: string; tensor: Tensor }[] = [];
        const sub = session.tap(imported.select(["weights"])).subscribe((e) => weights.push(e));
        const out = await session.run(
          Object.fromEntries(imported.inputs.map((i) => [i.name, c.inputs[i.name] as AnyTensor])),
        );
        sub.unsubscribe();
        const r = compare(out["logits"]!, c.expected.logits!, c.tolerance);
        expect(r.ok, `${r.failures} off, worst ${JSON.stringify(r.worst)}`).toBe(true);
        // Exported with targets: nanoGPT's loss too (SoftmaxCrossEntropyLoss, ignore_index -1).
        if (imported.outputs.includes("loss"))
          expect(compare(out["loss"]!, Tensor.from([c.expected.loss!], []), c.tolerance).ok).toBe(true);
        // Each layer's attention weights [B, H, T, T]: causal rows of probabilities.
        expect(weights).toHaveLength(layers);
        const [B, T] = c.inputs["idx"]!.shape as [number, number];
        for (const { tensor } of weights) {
          expect(tensor.shape).toEqual([B, c.config!["n_head"], T, T]);
          const d = tensor.toFloat32Array();
          for (let row = 0; row < d.length / T; row++) {
            const i = row % T;
            const vals = Array.from(d.subarray(row * T, row * T + T));
            expect(vals.reduce((a, v) => a + v, 0)).toBeCloseTo(1, 5);
            expect(vals.slice(i + 1).every((v) => v === 0)).toBe(true);
          }
        }
      } finally {
        await session.dispose();
      }
    },
  );

  it("names point back to the file: ONNX node names, value names, aliases, last segments and globs", () => {
    const [, c, dir] = onnxCases.find(([n]) => n === "nanogpt-onnx-l1")!;
    const imported = importCase(c, dir);
    expect(imported.resolve("/h.0/attn/Softmax")).toEqual(["/h.0/attn/Softmax"]);
    expect(imported.resolve("/h.0/attn/Softmax_output_0")).toEqual(["/h.0/attn/Softmax"]);
    expect(imported.resolve("/h.0/attn/weights")).toEqual(["/h.0/attn/Softmax"]);
    expect(imported.resolve("weights")).toEqual(["/h.0/attn/Softmax"]);
    expect(imported.resolve("/h.0/attn/c_attn/MatMul")).toEqual(["/h.0/attn/c_attn/Add"]); // the Linear's MatMul and Add are one projection
    expect(imported.resolve("/h.0/mlp/*").length).toBeGreaterThanOrEqual(3);
    expect(imported.resolve("no-such-node")).toEqual([]);
    expect(() => imported.select(["no-such-node"])).toThrow(/no node of the imported graph has this name/);
  });

  it("explain() lists the op types, the folds, the chain and each node's ONNX nodes", () => {
    const [, c, dir] = onnxCases.find(([n]) => n === "nanogpt-onnx-l1")!;
    const text = importCase(c, dir).explain();
    expect(text).toMatch(/114 nodes of 21 op types/);
    expect(text).toMatch(/folded at import \(shape arithmetic, constants, masks\): \d+ nodes/);
    expect(text).toMatch(/\/h\.0\/attn\/: .*Softmax.*⇒.*\(mask: causal top-left\)/);
    expect(text).toMatch(/\/h\.0\/mlp\/gelu\/Mul_1 = gelu {2}← .*Erf/);
  });

  it("the same file imports for another batch and length", async () => {
    const [, c, dir] = onnxCases.find(([n]) => n === "nanogpt-onnx-l1")!;
    const imported = importOnnx(readFileSync(join(dir, c.onnx!)), { dims: { batch: 2, T: 3 } });
    expect(imported.inputs).toEqual([{ name: "idx", shape: [2, 3], dtype: "int32", onnxType: "INT64" }]);
    const session = await compile(imported.graph, { executors: [createCpuExecutor()], weights: imported.weights });
    const ids = c.inputs["idx"]!.toInt32Array();
    const out = await session.run({ idx: Tensor.int32([...ids.subarray(0, 3), ...ids.subarray(0, 3)], [2, 3]) });
    await session.dispose();
    // Causal: the first three positions' logits do not depend on what comes after them.
    const want = c.expected.logits!.toFloat32Array().subarray(0, 3 * 30);
    const got = out["logits"]!.toFloat32Array();
    for (const half of [0, 1])
      expect(
        compare(Tensor.from(got.subarray(half * 90, half * 90 + 90), [90]), Tensor.from(want, [90]), c.tolerance).ok,
      ).toBe(true);
  });
});
