// PyTorch's mask conventions, taken as they come and turned into attngraph's:
// - attn_mask / src_mask: a bool mask (True = may NOT attend; an int32 tensor or nested booleans here) becomes a 0/1
//   keep-mask (0 hides); a float mask is additive (0 keeps, −∞ hides) and stays one.
// - key_padding_mask: bool or int (True / 1 = padded key) becomes the float 1 = padded; a float one is additive
//   (0 or −∞ per key) and becomes 1 where −∞.
import { Tensor, formatShape, type AnyTensor } from "@attngraph/tensor";
import { ModelInputError } from "./token-ids.js";

/**
 * A tensor from a Tensor or nested arrays: booleans and integers give int32 (PyTorch's bool / int convention), other
 * numbers float32 (additive). A float32 Tensor is additive whatever its values, as in PyTorch.
 */
function asTensor(name: string, value: unknown): AnyTensor {
  if (Tensor.isTensor(value)) return value;
  if (Array.isArray(value)) {
    const flat = (value as unknown[]).flat(Infinity);
    const shape: number[] = [];
    for (let v: unknown = value; Array.isArray(v); v = v[0]) shape.push(v.length);
    if (flat.every((v) => typeof v === "boolean"))
      return Tensor.int32(
        flat.map((v) => (v ? 1 : 0)),
        shape,
      );
    // Plain numbers have no dtype: integers are the int (bool) convention, anything else additive.
    if (flat.every((v) => typeof v === "number"))
      return (flat as number[]).every((v) => Number.isInteger(v))
        ? Tensor.int32(flat as number[], shape)
        : Tensor.from(flat as number[], shape);
  }
  throw new ModelInputError(
    name,
    "not a mask",
    "a Tensor (int32 = bool, float32 = additive) or nested booleans",
    value === null ? "null" : typeof value,
  );
}

/**
 * src_mask [T, T] / attn_mask [L, S]: { kind: "mask", tensor } (0/1, 0 hides) from a bool mask, { kind: "bias" } from
 * an additive one. `legend` names the shape in errors by the module's own letters.
 */
export function attnMask(
  name: string,
  value: unknown,
  T: number,
  S = T,
  legend = "[T, T]",
): { kind: "mask" | "bias"; tensor: Tensor } {
  const t = asTensor(name, value);
  if (t.shape.length !== 2 || t.shape[0] !== T || t.shape[1] !== S)
    throw new ModelInputError(
      name,
      `the attention mask is ${legend} (a 3-D [B·nhead, ${legend.slice(1, -1)}] mask is not supported)`,
      `[${T}, ${S}]`,
      formatShape(t.shape),
    );
  const data = t.contiguous().data;
  if (t.dtype === "int32") {
    const keep = new Float32Array(data.length);
    for (let i = 0; i < data.length; i++) keep[i] = data[i] === 0 ? 1 : 0;
    return { kind: "mask", tensor: Tensor.from(keep, t.shape) };
  }
  for (let i = 0; i < data.length; i++)
    if (Number.isNaN(data[i]!) || data[i] === Infinity)
      throw new ModelInputError(
        `${name}[${Math.floor(i / S)}][${i % S}]`,
        "an additive mask entry must be a number or −∞",
        "finite or -Infinity",
        String(data[i]),
      );
  return { kind: "bias", tensor: t as Tensor };
}

/** key_padding_mask [B, S] → float32 1 = padded key. */
export function keyPaddingMask(name: string, value: unknown, B: number, S: number): Tensor {
  const t = asTensor(name, value);
  if (t.shape.length !== 2 || t.shape[0] !== B || t.shape[1] !== S)
    throw new ModelInputError(name, "the key padding mask is [B, S]", `[${B}, ${S}]`, formatShape(t.shape));
  const data = t.contiguous().data;
  const pad = new Float32Array(data.length);
  for (let i = 0; i < data.length; i++) {
    const v = data[i]!;
    if (t.dtype === "int32") pad[i] = v === 0 ? 0 : 1;
    else if (v === 0) pad[i] = 0;
    else if (v === -Infinity) pad[i] = 1;
    else
      throw new ModelInputError(
        `${name}[${Math.floor(i / S)}][${i % S}]`,
        "a float key padding mask is additive: 0 keeps a key, −∞ pads it (other values are not supported)",
        "0 or -Infinity (or pass an int32 / bool mask)",
        String(v),
      );
  }
  return Tensor.from(pad, [B, S]);
}
