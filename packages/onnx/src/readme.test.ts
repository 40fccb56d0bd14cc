// The README's example, as written there (console output checked instead of printed).
import { attentionWeights, multiHeadAttention } from "@attngraph/attention";
import { Tensor } from "@attngraph/tensor";
import * as ort from "onnxruntime-node";
import { expect, it } from "vitest";
import { exportOnnxWithReport, formatExportReport } from "./index.js";

it("the README example exports multi-head attention and runs it in onnxruntime-node", async () => {
  const config = { dIn: 4, dOut: 4, numHeads: 2, causal: true };
  const w = (k: number) => Tensor.from(Array.from({ length: 16 }, (_, i) => Math.sin(i * k) * 0.5), [4, 4]);
  const weights = attentionWeights(config, { W_query: w(1), W_key: w(2), W_value: w(3), out_proj: w(4), out_bias: Tensor.from([0, 0.1, 0.2, 0.3], [4]) });
  const { model, report } = exportOnnxWithReport(multiHeadAttention(config), weights, { outputs: ["weights"] });
  expect(formatExportReport(report)).toMatch(/^queries \(projection\) → Transpose, MatMul$/m);

  const session = await ort.InferenceSession.create(model);
  const x = new ort.Tensor("float32", Float32Array.from({ length: 24 }, (_, i) => Math.cos(i)), [2, 3, 4]);
  const { output, weights: pattern } = await session.run({ x });
  expect([output!.dims, pattern!.dims]).toEqual([[2, 3, 4], [2, 2, 3, 3]]);
});
