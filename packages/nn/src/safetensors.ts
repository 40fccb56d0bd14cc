// The safetensors format (what PyTorch users save checkpoints to): 8 bytes of little-endian u64 N, N bytes of JSON
// header `{ name: { dtype, shape, data_offsets: [begin, end] }, "__metadata__"?: { string: string } }`, then the raw
// little-endian data, offsets relative to its start. The reader trusts nothing: every length, offset, dtype and shape
// is checked before a byte is read, so a truncated, oversized or overlapping file is a SafetensorsError naming the
// tensor and field, never a crash or a wrong tensor.
import { AttnGraphError, INT32_MAX, INT32_MIN, Tensor, clip, describe, sizeOf, type AnyTensor } from "@attngraph/tensor";

/** A file that is not valid safetensors, or holds a dtype this reader does not take. */
export class SafetensorsError extends AttnGraphError {
  constructor(subject: string, what: string, expected?: string, got?: string) {
    super("safetensors", describe(subject, what, expected, got), { subject, ...(expected === undefined ? {} : { expected }), ...(got === undefined ? {} : { got }) });
    this.name = "SafetensorsError";
  }
}

/** The format's own limit on the header (the reference implementation refuses more than 100 MB). */
const MAX_HEADER_BYTES = 100_000_000;

/** Bytes per element, and how each dtype becomes a tensor: floats to float32, integers to int32 (range-checked). */
const DTYPES: Readonly<Record<string, { bytes: number; read: (v: DataView, at: number) => number; int: boolean }>> = {
  F32: { bytes: 4, read: (v, at) => v.getFloat32(at, true), int: false },
  F64: { bytes: 8, read: (v, at) => v.getFloat64(at, true), int: false },
  F16: { bytes: 2, read: (v, at) => halfToFloat(v.getUint16(at, true)), int: false },
  BF16: { bytes: 2, read: (v, at) => bfloat16ToFloat(v.getUint16(at, true)), int: false },
  I32: { bytes: 4, read: (v, at) => v.getInt32(at, true), int: true },
  I64: { bytes: 8, read: (v, at) => Number(v.getBigInt64(at, true)), int: true },
};

/** IEEE half precision bits → number (exact: every half is a float32). */
export function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24; // zero and subnormals
  if (exp === 0x1f) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

/** bfloat16 bits → number: the top half of a float32. */
export function bfloat16ToFloat(b: number): number {
  const v = new DataView(new ArrayBuffer(4));
  v.setUint32(0, b << 16);
  return v.getFloat32(0);
}

/** Reads every tensor of a safetensors file; also its `__metadata__`. */
export function readSafetensors(bytes: Uint8Array): { tensors: Map<string, AnyTensor>; metadata: Record<string, string> } {
  if (!(bytes instanceof Uint8Array)) throw new SafetensorsError("safetensors", "expected the file's bytes", "a Uint8Array", typeof bytes);
  if (bytes.length < 8) throw new SafetensorsError("safetensors header size", "file too short for the header size", ">= 8 bytes", `${bytes.length} bytes`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = view.getBigUint64(0, true);
  if (n > BigInt(Math.min(MAX_HEADER_BYTES, bytes.length - 8))) {
    throw new SafetensorsError("safetensors header size", "header longer than the file (or than 100 MB)", `<= ${Math.min(MAX_HEADER_BYTES, bytes.length - 8)} bytes`, `${n} bytes`);
  }
  const headerEnd = 8 + Number(n);
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(8, headerEnd)));
  } catch (e) {
    throw new SafetensorsError("safetensors header", "header is not UTF-8 JSON", "a JSON object", clip((e as Error).message));
  }
  if (typeof header !== "object" || header === null || Array.isArray(header)) throw new SafetensorsError("safetensors header", "header is not a JSON object", "an object", Array.isArray(header) ? "an array" : String(header));
  const dataLength = bytes.length - headerEnd;
  const metadata: Record<string, string> = {};
  const spans: { name: string; begin: number; end: number }[] = [];
  const tensors = new Map<string, AnyTensor>();
  for (const name of Object.keys(header)) {
    const entry = (header as Record<string, unknown>)[name];
    if (name === "__metadata__") {
      if (typeof entry !== "object" || entry === null || Array.isArray(entry)) throw new SafetensorsError("__metadata__", "metadata must be an object of strings", "{ key: string }", String(entry));
      for (const [k, v] of Object.entries(entry)) {
        if (typeof v !== "string") throw new SafetensorsError(`__metadata__.${clip(k)}`, "metadata values must be strings", "a string", typeof v);
        Object.defineProperty(metadata, k, { value: v, enumerable: true, writable: true, configurable: true });
      }
      continue;
    }
    const subject = `tensor ${clip(name)}`;
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) throw new SafetensorsError(subject, "entry must be an object", "{ dtype, shape, data_offsets }", String(entry));
    const { dtype, shape, data_offsets: offsets } = entry as Record<string, unknown>;
    const spec = typeof dtype === "string" && Object.hasOwn(DTYPES, dtype) ? DTYPES[dtype]! : undefined;
    if (!spec) throw new SafetensorsError(`${subject}.dtype`, "unsupported dtype", Object.keys(DTYPES).join(", "), clip(String(dtype)));
    if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) throw new SafetensorsError(`${subject}.shape`, "invalid shape", "an array of non-negative integers", clip(JSON.stringify(shape) ?? String(shape)));
    if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every((o) => Number.isSafeInteger(o) && o >= 0)) {
      throw new SafetensorsError(`${subject}.data_offsets`, "invalid data offsets", "[begin, end], non-negative integers", clip(JSON.stringify(offsets) ?? String(offsets)));
    }
    const [begin, end] = offsets as [number, number];
    if (begin > end || end > dataLength) throw new SafetensorsError(`${subject}.data_offsets`, "data offsets outside the data", `0 <= begin <= end <= ${dataLength}`, `[${begin}, ${end}]`);
    const count = sizeOf(shape as number[]);
    if (end - begin !== count * spec.bytes) throw new SafetensorsError(`${subject}.data_offsets`, "byte length does not match dtype and shape", `${count * spec.bytes} bytes (${count} × ${dtype})`, `${end - begin} bytes`);
    spans.push({ name, begin, end });
    const values = new Array<number>(count);
    for (let i = 0; i < count; i++) values[i] = spec.read(view, headerEnd + begin + i * spec.bytes);
    if (spec.int) {
      const bad = values.findIndex((v) => v < INT32_MIN || v > INT32_MAX);
      if (bad >= 0) throw new SafetensorsError(`${subject}[${bad}]`, `${dtype} value outside the int32 range`, "an int32 value", String(values[bad]));
      tensors.set(name, Tensor.int32(values, shape as number[]));
    } else {
      const bad = values.findIndex((v) => Number.isFinite(v) && Math.abs(v) > 3.4028234663852886e38);
      if (bad >= 0) throw new SafetensorsError(`${subject}[${bad}]`, `${dtype} value outside the float32 range`, "|v| <= 3.4e38", String(values[bad]));
      tensors.set(name, Tensor.from(values, shape as number[]));
    }
  }
  spans.sort((a, b) => a.begin - b.begin || a.end - b.end);
  for (let i = 1; i < spans.length; i++) {
    const a = spans[i - 1]!;
    const b = spans[i]!;
    if (b.begin < a.end) throw new SafetensorsError(`tensor ${clip(b.name)}.data_offsets`, `data overlaps tensor ${clip(a.name, 60)}`, `begin >= ${a.end}`, `[${b.begin}, ${b.end}]`);
  }
  return { tensors, metadata };
}

/**
 * A safetensors file of `tensors` (float32 as F32, int32 as I32), laid out as the reference implementation does: the
 * header padded with spaces to a multiple of 8 bytes, tensors in name order, back to back.
 */
export function writeSafetensors(tensors: Readonly<Record<string, AnyTensor>> | ReadonlyMap<string, AnyTensor>, metadata: Readonly<Record<string, string>> = {}): Uint8Array {
  const entries = (tensors instanceof Map ? [...tensors.entries()] : Object.entries(tensors)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const header: Record<string, unknown> = {};
  if (Object.keys(metadata).length) header["__metadata__"] = { ...metadata };
  let at = 0;
  for (const [name, t] of entries) {
    const bytes = t.size * 4;
    header[name] = { dtype: t.dtype === "int32" ? "I32" : "F32", shape: [...t.shape], data_offsets: [at, at + bytes] };
    at += bytes;
  }
  let json = new TextEncoder().encode(JSON.stringify(header));
  const padded = Math.ceil(json.length / 8) * 8;
  if (padded !== json.length) json = new TextEncoder().encode(JSON.stringify(header) + " ".repeat(padded - json.length));
  const out = new Uint8Array(8 + json.length + at);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  let p = 8 + json.length;
  for (const [, t] of entries) {
    const flat = t.dtype === "int32" ? t.toInt32Array() : t.toFloat32Array();
    for (let i = 0; i < flat.length; i++, p += 4) {
      if (t.dtype === "int32") view.setInt32(p, flat[i]!, true);
      else view.setFloat32(p, flat[i]!, true);
    }
  }
  return out;
}
