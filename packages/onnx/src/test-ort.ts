// Runs an exported model in onnxruntime-node (tests only). A model onnxruntime rejects throws here, so the test that
// exported it fails: a rejected model is never a skip.
import * as ort from "onnxruntime-node";
import { Tensor, type AnyTensor } from "@attngraph/tensor";

/** Feeds the inputs the model declares (by name), fetches `outputs`, and returns them as attngraph tensors. */
export async function runInOrt(
  model: Uint8Array,
  inputs: Readonly<Record<string, AnyTensor>>,
  outputs: readonly string[],
): Promise<Record<string, AnyTensor>> {
  const session = await ort.InferenceSession.create(model);
  try {
    const feeds: Record<string, ort.Tensor> = {};
    for (const name of session.inputNames) {
      const t = inputs[name];
      if (!t) throw new Error(`no value for the model's input ${name}`);
      feeds[name] =
        t.dtype === "int32"
          ? new ort.Tensor("int32", t.toInt32Array(), [...t.shape])
          : new ort.Tensor("float32", t.toFloat32Array(), [...t.shape]);
    }
    const got = await session.run(feeds, [...outputs]);
    const out: Record<string, AnyTensor> = {};
    for (const name of outputs) {
      const v = got[name]!;
      const dims = v.dims.map(Number);
      out[name] =
        v.type === "int32" ? Tensor.int32(v.data as Int32Array, dims) : Tensor.from(v.data as Float32Array, dims);
    }
    return out;
  } finally {
    await session.release();
  }
}
