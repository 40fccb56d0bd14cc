// The safetensors format (what PyTorch users save checkpoints to): 8 bytes of little-endian u64 N, N bytes of JSON
// header `{ name: { dtype, shape, data_offsets: [begin, end] }, "__metadata__"?: { string: string } }`, then the raw
// little-endian data, offsets relative to its start. The reader trusts nothing: every length, offset, dtype and shape
// is checked before a byte is read, so a truncated, oversized or overlapping file is a SafetensorsError naming the
// tensor and field, never a crash or a wrong tensor. It refuses what the reference reader (huggingface/safetensors)
// refuses: the tensors' data must be back to back from byte 0 to the file's end (a gap or trailing bytes could hide
// anything), and a name may appear once (the format's header is a map; JSON.parse would keep the last silently).
import { SubjectError, INT32_MAX, INT32_MIN, Tensor, clip, sizeOf, type AnyTensor } from "@attngraph/tensor";
import { findDuplicateKey } from "./json-keys.js";

/** A file that is not valid safetensors, a dtype this reader does not take, or tensors and metadata no file can hold. */
export class SafetensorsError extends SubjectError {
  constructor(subject: string, what: string, expected?: string, got?: string) {
    super("safetensors", subject, what, expected, got);
    this.name = "SafetensorsError";
  }
}

/** The format's own limit on the header (the reference implementation refuses more than 100 MB). */
export const MAX_HEADER_BYTES = 100_000_000;

/** The header key the format reserves for the file's string → string metadata. */
export const METADATA_KEY = "__metadata__";

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

/**
 * Reads every tensor of a safetensors file; also its `__metadata__`. `tensors` is a Map in the file's order;
 * `stateDict` holds the same tensors as a plain object (no prototype), for code written for objects
 * (`Object.entries`, `sd["wte.weight"]`): over a Map, `Object.entries` lists nothing, silently.
 */
export function readSafetensors(bytes: Uint8Array): {
  tensors: Map<string, AnyTensor>;
  stateDict: Record<string, AnyTensor>;
  metadata: Record<string, string>;
} {
  if (!(bytes instanceof Uint8Array))
    throw new SafetensorsError("safetensors", "expected the file's bytes", "a Uint8Array", typeof bytes);
  if (bytes.length < 8)
    throw new SafetensorsError(
      "safetensors header size",
      "file too short for the header size",
      ">= 8 bytes",
      `${bytes.length} bytes`,
    );
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = view.getBigUint64(0, true);
  if (n > BigInt(Math.min(MAX_HEADER_BYTES, bytes.length - 8))) {
    throw new SafetensorsError(
      "safetensors header size",
      "header longer than the file (or than 100 MB)",
      `<= ${Math.min(MAX_HEADER_BYTES, bytes.length - 8)} bytes`,
      `${n} bytes`,
    );
  }
  const headerEnd = 8 + Number(n);
  let text = "";
  let header: unknown;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(8, headerEnd));
    header = JSON.parse(text);
  } catch (e) {
    throw new SafetensorsError(
      "safetensors header",
      "header is not UTF-8 JSON",
      "a JSON object",
      clip((e as Error).message),
    );
  }
  if (typeof header !== "object" || header === null || Array.isArray(header))
    throw new SafetensorsError(
      "safetensors header",
      "header is not a JSON object",
      "an object",
      Array.isArray(header) ? "an array" : String(header),
    );
  const twice = findDuplicateKey(text, 2);
  if (twice)
    throw new SafetensorsError(
      duplicateSubject(twice.path, twice.key),
      "named twice in the header (JSON would keep only the last)",
      "each name once",
      `a second ${clip(JSON.stringify(twice.key), 60)}`,
    );
  const dataLength = bytes.length - headerEnd;
  const metadata: Record<string, string> = {};
  const entries: Entry[] = [];
  for (const name of Object.keys(header)) {
    const entry = (header as Record<string, unknown>)[name];
    if (name === METADATA_KEY) readMetadata(entry, metadata);
    else entries.push(checkEntry(name, entry, dataLength));
  }
  checkContiguous(entries, dataLength);
  const tensors = new Map<string, AnyTensor>();
  for (const e of entries) tensors.set(e.name, readTensor(view, headerEnd, e));
  const stateDict = Object.create(null) as Record<string, AnyTensor>;
  for (const [k, t] of tensors) stateDict[k] = t;
  return { tensors, stateDict, metadata };
}

/** A tensor's header entry, checked: its dtype, shape and where its bytes are in the data. */
interface Entry {
  readonly name: string;
  readonly dtype: string;
  readonly shape: number[];
  readonly begin: number;
  readonly end: number;
}

/** The subject of a name given twice: `tensor w`, `tensor w.dtype`, `__metadata__` or `__metadata__.format`. */
function duplicateSubject(path: readonly string[], key: string): string {
  const head = path.length === 0 ? key : path[0]!;
  const top = head === METADATA_KEY ? METADATA_KEY : `tensor ${clip(head)}`;
  return path.length === 0 ? top : `${top}.${clip(key, 60)}`;
}

/** `__metadata__` into `out`: an object of strings, as the format says (the reference reader refuses other values). */
function readMetadata(entry: unknown, out: Record<string, string>): void {
  if (typeof entry !== "object" || entry === null || Array.isArray(entry))
    throw new SafetensorsError(METADATA_KEY, "metadata must be an object of strings", "{ key: string }", String(entry));
  for (const [k, v] of Object.entries(entry)) {
    if (typeof v !== "string")
      throw new SafetensorsError(`${METADATA_KEY}.${clip(k)}`, "metadata values must be strings", "a string", typeof v);
    Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  }
}

/** A tensor's entry: a known dtype, a shape of non-negative integers, offsets inside the data that hold that many bytes. */
function checkEntry(name: string, entry: unknown, dataLength: number): Entry {
  const subject = `tensor ${clip(name)}`;
  if (typeof entry !== "object" || entry === null || Array.isArray(entry))
    throw new SafetensorsError(subject, "entry must be an object", "{ dtype, shape, data_offsets }", String(entry));
  const { dtype, shape, data_offsets: offsets } = entry as Record<string, unknown>;
  const spec = typeof dtype === "string" && Object.hasOwn(DTYPES, dtype) ? DTYPES[dtype]! : undefined;
  if (!spec)
    throw new SafetensorsError(
      `${subject}.dtype`,
      "unsupported dtype",
      Object.keys(DTYPES).join(", "),
      clip(String(dtype)),
    );
  if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0))
    throw new SafetensorsError(
      `${subject}.shape`,
      "invalid shape",
      "an array of non-negative integers",
      clip(JSON.stringify(shape) ?? String(shape)),
    );
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every((o) => Number.isSafeInteger(o) && o >= 0)) {
    throw new SafetensorsError(
      `${subject}.data_offsets`,
      "invalid data offsets",
      "[begin, end], non-negative integers",
      clip(JSON.stringify(offsets) ?? String(offsets)),
    );
  }
  const [begin, end] = offsets as [number, number];
  if (begin > end || end > dataLength)
    throw new SafetensorsError(
      `${subject}.data_offsets`,
      "data offsets outside the data",
      `0 <= begin <= end <= ${dataLength}`,
      `[${begin}, ${end}]`,
    );
  const count = sizeOf(shape as number[]);
  if (end - begin !== count * spec.bytes)
    throw new SafetensorsError(
      `${subject}.data_offsets`,
      "byte length does not match dtype and shape",
      `${count * spec.bytes} bytes (${count} × ${dtype})`,
      `${end - begin} bytes`,
    );
  return { name, dtype: dtype as string, shape: shape as number[], begin, end };
}

/**
 * The tensors' bytes must tile the data exactly: in offset order each begins where the one before ended, the first at
 * 0, and the last ends at the file's end. An overlap would give two tensors one byte; a gap or trailing bytes are bytes
 * no tensor accounts for (the reference reader refuses both: InvalidOffset, MetadataIncompleteBuffer).
 */
function checkContiguous(entries: readonly Entry[], dataLength: number): void {
  const spans = [...entries].sort((a, b) => a.begin - b.begin || a.end - b.end);
  let at = 0;
  let before: string | undefined;
  for (const s of spans) {
    const subject = `tensor ${clip(s.name)}.data_offsets`;
    if (s.begin < at)
      throw new SafetensorsError(
        subject,
        `data overlaps tensor ${clip(before!, 60)}`,
        `begin >= ${at}`,
        `[${s.begin}, ${s.end}]`,
      );
    if (s.begin > at)
      throw new SafetensorsError(
        subject,
        `gap of ${s.begin - at} bytes no tensor holds ${before === undefined ? "at the data's start" : `after tensor ${clip(before, 60)}`}`,
        `begin = ${at}`,
        `[${s.begin}, ${s.end}]`,
      );
    at = s.end;
    before = s.name;
  }
  if (at !== dataLength) {
    throw new SafetensorsError(
      "safetensors data",
      `${dataLength - at} bytes after the last tensor's data`,
      `${at} bytes of data (the file ends where its last tensor does)`,
      `${dataLength} bytes`,
    );
  }
}

/** What a value must fit to become an element of an int32 or float32 tensor (±∞ and NaN are float32 values as they are). */
const RANGES = {
  int32: { expected: "an int32 value", outside: (v: number) => v < INT32_MIN || v > INT32_MAX },
  float32: {
    expected: "|v| <= 3.4e38",
    outside: (v: number) => Number.isFinite(v) && Math.abs(v) > 3.4028234663852886e38,
  },
} as const;

/** A checked entry's values: floats as float32, integers as int32 (each range-checked, never wrapped or rounded to ∞). */
function readTensor(view: DataView, dataStart: number, e: Entry): AnyTensor {
  const spec = DTYPES[e.dtype]!;
  const count = (e.end - e.begin) / spec.bytes;
  const values = new Array<number>(count);
  for (let i = 0; i < count; i++) values[i] = spec.read(view, dataStart + e.begin + i * spec.bytes);
  const dtype = spec.int ? "int32" : "float32";
  const bad = values.findIndex(RANGES[dtype].outside);
  if (bad >= 0)
    throw new SafetensorsError(
      `tensor ${clip(e.name)}[${bad}]`,
      `${e.dtype} value outside the ${dtype} range`,
      RANGES[dtype].expected,
      String(values[bad]),
    );
  return dtype === "int32" ? Tensor.int32(values, e.shape) : Tensor.from(values, e.shape);
}
