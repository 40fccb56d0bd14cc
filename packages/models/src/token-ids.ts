// Token ids as a model takes them, checked on the host before anything runs: an int32 [B, T] (or nested arrays of
// integers), every id in [0, vocab), T within the block size. A float tensor where ids belong or an id out of range
// is a typed error naming the input, never a kernel's failure or a read of another row.
import { AttnGraphError, Tensor, formatShape, type AnyTensor } from "@attngraph/tensor";

/** Input a model cannot take: names the input, what was expected and what came. Nothing ran. */
export class ModelInputError extends AttnGraphError {
  constructor(subject: string, what: string, expected: string, got: string) {
    super("model-input", `${subject}: ${what} (expected ${expected}, got ${got})`, { subject, expected, got });
    this.name = "ModelInputError";
  }
}

/** `inputs` as a forward takes them, an object of named arguments; else a ModelInputError saying which (`expected`). */
export function checkInputsObject(inputs: unknown, expected: string): asserts inputs is object {
  if (typeof inputs !== "object" || inputs === null)
    throw new ModelInputError("inputs", "not an inputs object", expected, String(inputs));
}

/**
 * ids as an int32 [B, T] tensor, or a ModelInputError. `maxLength` bounds T (the block size); `ignoreIndex` is a
 * value allowed besides [0, vocab) (targets: the loss skips it, as nanoGPT's -1 and Hugging Face's -100).
 */
export function tokenIds(
  name: string,
  value: unknown,
  vocabSize: number,
  maxLength: number,
  ignoreIndex?: number,
): Tensor<"int32"> {
  let t: AnyTensor;
  if (Tensor.isTensor(value)) t = value;
  else if (Array.isArray(value) && value.every((row) => Array.isArray(row))) {
    const rows = value as number[][];
    const width = rows[0]?.length ?? 0;
    if (rows.some((r) => r.length !== width))
      throw new ModelInputError(
        name,
        "rows of different lengths",
        `[B, T] rows of one length`,
        rows.map((r) => r.length).join(", "),
      );
    const flat = rows.flat();
    const bad = flat.findIndex((v) => typeof v !== "number" || !Number.isInteger(v));
    if (bad >= 0)
      throw new ModelInputError(
        `${name}[${Math.floor(bad / Math.max(width, 1))}][${bad % Math.max(width, 1)}]`,
        "a token id must be an integer",
        `an integer in [0, ${vocabSize})`,
        String(flat[bad]),
      );
    t = Tensor.int32(flat, [rows.length, width]);
  } else
    throw new ModelInputError(
      name,
      "not token ids",
      "an int32 Tensor [B, T] or nested arrays of integers",
      value === null ? "null" : Array.isArray(value) ? "a flat array (wrap it: [[…]])" : typeof value,
    );
  if (t.dtype !== "int32")
    throw new ModelInputError(
      name,
      "token ids must be int32",
      `an int32 tensor [B, T]`,
      `${t.dtype} ${formatShape(t.shape)}`,
    );
  if (t.shape.length !== 2)
    throw new ModelInputError(name, "token ids are [batch, positions]", "rank 2 [B, T]", formatShape(t.shape));
  const [B, T] = t.shape as [number, number];
  if (B < 1 || T < 1) throw new ModelInputError(name, "no tokens", "[B, T] with B, T >= 1", formatShape(t.shape));
  if (T > maxLength)
    throw new ModelInputError(
      name,
      `${T} positions are more than the model's block size`,
      `T <= ${maxLength}`,
      String(T),
    );
  const data = t.contiguous().data;
  for (let i = 0; i < data.length; i++) {
    const v = data[i]!;
    if ((v < 0 || v >= vocabSize) && v !== ignoreIndex) {
      throw new ModelInputError(
        `${name}[${Math.floor(i / T)}][${i % T}]`,
        "token id outside the vocabulary",
        `an integer in [0, ${vocabSize})${ignoreIndex === undefined ? "" : ` or ${ignoreIndex} (ignored)`}`,
        String(v),
      );
    }
  }
  return t as Tensor<"int32">;
}
