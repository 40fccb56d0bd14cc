// What a model loader accepts as a checkpoint: a .safetensors file's bytes, or tensors by key (a Map, as
// readSafetensors returns them, or an object, as golden files and hand-made dicts are). One Map out, whatever came.
import { readSafetensors, type TensorJSON } from "@attngraph/nn";
import { Tensor, type AnyTensor } from "@attngraph/tensor";
import { ModelConfigError } from "./config-fields.js";

export type Checkpoint =
  | Uint8Array
  | ArrayBuffer
  | ReadonlyMap<string, AnyTensor | TensorJSON>
  | Readonly<Record<string, AnyTensor | TensorJSON>>;

/** The checkpoint's tensors by key; JSON tensors become float32 Tensors (their values are checked by the loader). */
export function tensorsOf(source: Checkpoint): Map<string, AnyTensor> {
  if (source instanceof Uint8Array || source instanceof ArrayBuffer)
    return readSafetensors(source instanceof ArrayBuffer ? new Uint8Array(source) : source).tensors as Map<
      string,
      AnyTensor
    >;
  const entries =
    source instanceof Map
      ? [...source.entries()]
      : typeof source === "object" && source !== null && !Array.isArray(source)
        ? Object.entries(source)
        : undefined;
  if (entries === undefined)
    throw new ModelConfigError(
      "checkpoint",
      "not a checkpoint",
      "the bytes of a .safetensors file, or a Map or object of tensors by state_dict key",
      Array.isArray(source) ? "an array" : String(source),
    );
  const out = new Map<string, AnyTensor>();
  for (const [key, v] of entries) {
    if (Tensor.isTensor(v)) out.set(key, v);
    else if (
      typeof v === "object" &&
      v !== null &&
      Array.isArray((v as TensorJSON).shape) &&
      Array.isArray((v as TensorJSON).data)
    )
      out.set(key, Tensor.from((v as TensorJSON).data as number[], (v as TensorJSON).shape));
    else
      throw new ModelConfigError(
        `checkpoint.${key}`,
        "not a tensor",
        "a Tensor or { shape, data }",
        v === null ? "null" : typeof v,
      );
  }
  return out;
}

/**
 * A 2-D tensor transposed, as a view of the same data: Conv1D's [in, out] read as nn.Linear's [out, in], and back. No
 * copy here: an executor's upload makes the one dense copy it needs (GPT-2 small's projections are 340 MB; copying
 * them on the host first cost a second pass over them and that much more memory for as long as the model lives).
 */
export function transposed(t: AnyTensor): Tensor {
  return t.transpose(0, 1) as Tensor;
}

/** Whether two tensors hold the same shape and values (a tied lm_head saved beside its embedding). */
export function sameTensor(a: AnyTensor, b: AnyTensor): boolean {
  if (a === b) return true;
  if (a.shape.length !== b.shape.length || a.shape.some((d, i) => d !== b.shape[i])) return false;
  const x = a.contiguous().data;
  const y = b.contiguous().data;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i] && !(Number.isNaN(x[i]) && Number.isNaN(y[i]))) return false;
  return true;
}
