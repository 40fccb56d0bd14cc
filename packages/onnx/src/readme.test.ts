// The README's examples: the export one as written there (console output checked instead of printed), and the import
// one run from the README's own text.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { attentionWeights, multiHeadAttention } from "@attngraph/attention";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { compile } from "@attngraph/runtime";
import { compare, Tensor } from "@attngraph/tensor";
import { goldenModelsDir, parseModelCase } from "@attngraph/testkit";
import * as ort from "onnxruntime-node";
import { describe, expect, it, vi } from "vitest";
import { exportOnnxWithReport, formatExportReport, importOnnx } from "./index.js";

it("the README example exports multi-head attention and runs it in onnxruntime-node", async () => {
  const config = { dIn: 4, dOut: 4, numHeads: 2, causal: true };
  const w = (k: number) =>
    Tensor.from(
      Array.from({ length: 16 }, (_, i) => Math.sin(i * k) * 0.5),
      [4, 4],
    );
  const weights = attentionWeights(config, {
    W_query: w(1),
    W_key: w(2),
    W_value: w(3),
    out_proj: w(4),
    out_bias: Tensor.from([0, 0.1, 0.2, 0.3], [4]),
  });
  const { model, report } = exportOnnxWithReport(multiHeadAttention(config), weights, { outputs: ["weights"] });
  expect(formatExportReport(report)).toMatch(/^queries \(projection\) → Transpose, MatMul$/m);

  const session = await ort.InferenceSession.create(model);
  const x = new ort.Tensor(
    "float32",
    Float32Array.from({ length: 24 }, (_, i) => Math.cos(i)),
    [2, 3, 4],
  );
  const { output, weights: pattern } = await session.run({ x });
  expect([output!.dims, pattern!.dims]).toEqual([
    [2, 3, 4],
    [2, 2, 3, 3],
  ]);
});

describe("the README's import example, run as written there", () => {
  it("imports the nanoGPT export, taps its attention weights and gives PyTorch's logits", async () => {
    const readme = readFileSync(fileURLToPath(new URL("../README.md", import.meta.url)), "utf8");
    const block = readme.slice(readme.indexOf("## Import")).match(/```ts\n([\s\S]*?)```/)![1]!;
    const body = block.replace(/^import .*$/gm, "");
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor as new (
      ...args: string[]
    ) => (...a: unknown[]) => Promise<Tensor>;
    const given = {
      importOnnx,
      compile,
      createCpuExecutor,
      Tensor,
      readFileSync: (f: string) => readFileSync(join(goldenModelsDir, f)),
    };
    const logits = await new AsyncFunction(...Object.keys(given), `${body}\nreturn logits;`)(...Object.values(given));
    const printed = log.mock.calls.map((c) => c.map(String).join(" "));
    log.mockRestore();
    expect(printed[0]).toMatch(/attention chains: 1/);
    expect(printed[1]).toBe("/h.0/attn/Softmax 1,2,7,7");
    const c = parseModelCase(
      JSON.parse(readFileSync(join(goldenModelsDir, "nanogpt-onnx-l1.json"), "utf8")),
      "nanogpt-onnx-l1.json",
    );
    expect(compare(logits, c.expected.logits!, c.tolerance).ok).toBe(true);
  });
});
