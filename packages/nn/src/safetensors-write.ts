// writeSafetensors: tensors and string metadata as a safetensors file, laid out as the reference writer lays one out.
// Writer and reader keep the same rules: everything is checked before a byte is written, so a file this writes is one
// readSafetensors and the reference reader read back. A value that is not a Tensor, metadata that is not string →
// string, a tensor named `__metadata__`, a name JSON cannot carry, or a header over the format's 100 MB is a
// SafetensorsError naming it, never a RangeError from a DataView or a file its own reader refuses.
import { Tensor, clip, type AnyTensor } from "@attngraph/tensor";
import { kindOf } from "./args.js";
import { MAX_HEADER_BYTES, METADATA_KEY, SafetensorsError } from "./safetensors.js";

/**
 * A safetensors file of `tensors` (float32 as F32, int32 as I32; an object or a Map by name) and `metadata` (string →
 * string, an object or a Map), laid out as the reference implementation does: the header padded with spaces to a
 * multiple of 8 bytes, tensors in name order, back to back.
 */
export function writeSafetensors(
  tensors: Readonly<Record<string, AnyTensor>> | ReadonlyMap<string, AnyTensor>,
  metadata: Readonly<Record<string, string>> | ReadonlyMap<string, string> = {},
): Uint8Array {
  const entries = namedEntries(
    tensors,
    "writeSafetensors tensors",
    "tensors must be given by name",
    "an object or Map of Tensors by name",
  ).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  // Null prototypes: a tensor or metadata key "__proto__" is a name like any other, not the object's prototype.
  const header: Record<string, unknown> = Object.create(null);
  const meta: Record<string, string> = Object.create(null);
  for (const [k, v] of namedEntries(
    metadata,
    METADATA_KEY,
    "metadata must be an object of strings",
    "an object or Map of string → string",
  )) {
    if (typeof v !== "string")
      throw new SafetensorsError(
        `${METADATA_KEY}.${clip(k)}`,
        "metadata values must be strings",
        "a string",
        kindOf(v),
      );
    wellFormed(`${METADATA_KEY}.${clip(k)}`, v);
    meta[k] = v;
  }
  if (Object.keys(meta).length) header[METADATA_KEY] = meta;
  let at = 0;
  for (const [name, t] of entries) {
    const subject = `tensor ${clip(name)}`;
    if (name === METADATA_KEY)
      throw new SafetensorsError(
        subject,
        "the format reserves this name for the file's metadata",
        "another tensor name",
        name,
      );
    if (!Tensor.isTensor(t))
      throw new SafetensorsError(subject, "not a tensor", "a Tensor (Tensor.from, Tensor.int32)", describeValue(t));
    const bytes = t.size * 4;
    header[name] = { dtype: t.dtype === "int32" ? "I32" : "F32", shape: [...t.shape], data_offsets: [at, at + bytes] };
    at += bytes;
  }
  const text = JSON.stringify(header);
  let json = new TextEncoder().encode(text);
  const padded = Math.ceil(json.length / 8) * 8;
  if (padded > MAX_HEADER_BYTES)
    throw new SafetensorsError(
      "safetensors header size",
      "header longer than the format allows (readers refuse it)",
      `<= ${MAX_HEADER_BYTES} bytes`,
      `${padded} bytes`,
    );
  if (padded !== json.length) json = new TextEncoder().encode(text + " ".repeat(padded - json.length));
  const out = new Uint8Array(8 + json.length + at);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  let p = 8 + json.length;
  for (const [, t] of entries) {
    const tensor = t as AnyTensor;
    const flat = tensor.dtype === "int32" ? tensor.toInt32Array() : tensor.toFloat32Array();
    for (let i = 0; i < flat.length; i++, p += 4) {
      if (tensor.dtype === "int32") view.setInt32(p, flat[i]!, true);
      else view.setFloat32(p, flat[i]!, true);
    }
  }
  return out;
}

/** The (name, value) pairs of an object's own keys or a Map's entries; names are checked to be well-formed strings. */
function namedEntries(record: unknown, subject: string, what: string, expected: string): [string, unknown][] {
  let entries: [unknown, unknown][];
  if (record instanceof Map) entries = [...record.entries()];
  else if (typeof record === "object" && record !== null && !Array.isArray(record))
    entries = Object.keys(record).map((k) => [k, (record as Record<string, unknown>)[k]]);
  else throw new SafetensorsError(subject, what, expected, kindOf(record));
  for (const [k] of entries) {
    if (typeof k !== "string")
      throw new SafetensorsError(subject, "names must be strings (JSON keys)", "string keys", kindOf(k));
    wellFormed(`${subject} name ${clip(k)}`, k);
  }
  return entries as [string, unknown][];
}

/**
 * A lone UTF-16 surrogate has no UTF-8 form: JSON.stringify writes it as a `\udXXX` escape, which the reference reader
 * (serde_json) refuses, so the file would not load in Python.
 */
function wellFormed(subject: string, s: string): void {
  const lone = /\p{Surrogate}/u.exec(s);
  if (lone)
    throw new SafetensorsError(
      subject,
      "a lone UTF-16 surrogate has no UTF-8 form (other readers refuse the file)",
      "well-formed Unicode",
      `\\u${lone[0].charCodeAt(0).toString(16)} at ${lone.index}`,
    );
}

/** What a non-tensor value is; a `{ shape, data }` object gets the way to make it a tensor. */
function describeValue(v: unknown): string {
  if (typeof v === "object" && v !== null && !Array.isArray(v) && "shape" in v && "data" in v)
    return "{ shape, data } (Tensor.from(data, shape) makes it one)";
  return kindOf(v);
}
