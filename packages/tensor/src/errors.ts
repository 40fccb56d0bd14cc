// Every error this project throws is an AttnGraphError. The class is recognised by a global symbol, not by
// `instanceof`, so the check still holds when two copies of a package end up in one bundle (vercel/ai's pattern).
const MARKER = Symbol.for("attngraph.error");

export interface ErrorDetails {
  /** The node, tensor, input or field the error is about. */
  readonly subject?: string;
  readonly expected?: string;
  readonly got?: string;
  readonly cause?: unknown;
}

/**
 * Every code an AttnGraphError carries: stable and machine-readable (tests and tools switch on them; messages may
 * change). A new kind of failure adds its code here.
 */
export type ErrorCode =
  /** a graph or its input breaks a declared rule (the general case of GraphValidationError). */
  | "validation"
  /** two values of a graph share a name. */
  | "duplicate-name"
  /** a node reads a value the graph does not have. */
  | "dangling-edge"
  /** the graph has a cycle. */
  | "cycle"
  /** an op kind no registry declares. */
  | "unknown-op"
  /** an op kind declared twice in one registry. */
  | "duplicate-op"
  /** a shape that does not fit (rank, dims, broadcasting). */
  | "shape"
  /** a value given to a run or a kernel is missing, of the wrong kind or dtype, or holds a bad value. */
  | "input"
  /** an attribute (or an executor option) out of its range. */
  | "attr"
  /** an expression's attribute of the wrong form. */
  | "attribute"
  /** a gathered read of an expression outside its input. */
  | "index"
  /** a document (graph JSON) that is not of the format. */
  | "format"
  /** a builder's configuration out of range. */
  | "config"
  /** asked for something not built (yet): the message says what. */
  | "unsupported"
  /** a run's step failed with something other than an AttnGraphError (a kernel's own exception). */
  | "kernel"
  /** an executor list or placement that cannot run the graph. */
  | "executor"
  /** a second kernel for one op kind on one executor. */
  | "duplicate-kernel"
  /** a kernel that is not a function. */
  | "invalid-kernel"
  /** a kernel returned a value of the wrong shape. */
  | "kernel-output"
  /** a run or an allocation over the memory limit. */
  | "memory-limit"
  /** an executor used before init() (or after dispose()). */
  | "not-initialised"
  /** a session or executor used after dispose(). */
  | "disposed"
  /** a run or a kernel stopped by its AbortSignal. */
  | "aborted"
  /** NaN or ±∞ where checkNumerics allows none. */
  | "numerics"
  /** a tap's selector or subscriber failed. */
  | "tap"
  /** an activation patch of the wrong shape or that threw. */
  | "override"
  /** a decoder step that cannot go on (its inputs, its state). */
  | "decode"
  /** a decoder's key/value cache is full. */
  | "cache-overflow"
  /** a decoder called again while its previous step runs. */
  | "decode-busy"
  /** the wasm module trapped (it is re-instantiated). */
  | "wasm-trap"
  /** the WebGPU device was lost (the next run requests a new one). */
  | "device-lost"
  /** no WebGPU adapter on this machine or page. */
  | "no-adapter"
  /** WebGPU reported a validation error for a kernel's program. */
  | "webgpu-validation"
  /** WebGPU ran out of memory for a kernel's buffers. */
  | "webgpu-out-of-memory"
  /** a WebGPU readback failed. */
  | "webgpu-readback"
  /** a .safetensors file that cannot be read or written. */
  | "safetensors"
  /** a state dict that does not fit the graph's weights. */
  | "state-dict"
  /** a model checkpoint's configuration or tensors that do not fit its family. */
  | "model-config"
  /** a model's input (token ids) out of range. */
  | "model-input"
  /** generation that cannot go on (its prompt, its options). */
  | "generate"
  /** a graph that exportOnnx cannot write. */
  | "onnx-export"
  /** an ONNX file that importOnnx cannot read or build. */
  | "onnx-import"
  /** a golden case file that is not of the format. */
  | "case-format"
  /** a file the CLI cannot read. */
  | "file"
  /** the per-node executor diff cannot compare. */
  | "diff"
  /** a repro that cannot be replayed. */
  | "replay"
  /** a repro file that is not of the format. */
  | "repro-format";

export class AttnGraphError extends Error {
  readonly [MARKER] = true;
  /** A stable machine-readable code (ErrorCode), e.g. `shape`, `validation`, `unsupported`. */
  readonly code: ErrorCode;
  readonly subject: string | undefined;
  readonly expected: string | undefined;
  readonly got: string | undefined;

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}) {
    // The fields are cut as describe() cuts them, so the message and the fields always say the same thing.
    super(clip(message, MAX_MESSAGE), details.cause === undefined ? undefined : { cause: details.cause });
    this.name = "AttnGraphError";
    this.code = code;
    this.subject = clipOpt(details.subject, MAX_VALUE);
    this.expected = clipOpt(details.expected, MAX_EXPECTED);
    this.got = clipOpt(details.got, MAX_VALUE);
  }

  static isInstance(value: unknown): value is AttnGraphError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[MARKER] === true;
  }
}

// Limits on what a message quotes. The user's strings (a node name, a config value, a file path, a 4 MB option) reach
// messages through subject and got; expected is mostly our own list of valid choices, so it gets more room. Together
// with the separators they stay under the 600 characters docs/reliability.md promises for every message.
const MAX_VALUE = 120;
const MAX_WHAT = 140;
const MAX_EXPECTED = 200;
const MAX_MESSAGE = 599;

/**
 * `value` cut to at most `max` characters (default 120): the middle gives way to "…", so both ends stay readable
 * (a path's file name, a JSON path's last key, a quoted string's closing quote). Never splits a surrogate pair.
 */
export function clip(value: string, max: number = MAX_VALUE): string {
  if (value.length <= max) return value;
  let head = Math.ceil(((max - 1) * 2) / 3);
  let tail = max - 1 - head;
  if (isSurrogate(value.charCodeAt(head - 1), 0xd800)) head--; // would end on the first half of a pair
  if (tail > 0 && isSurrogate(value.charCodeAt(value.length - tail), 0xdc00)) tail--; // would start on the second half
  return `${value.slice(0, head)}…${value.slice(value.length - tail)}`;
}

function isSurrogate(code: number, base: 0xd800 | 0xdc00): boolean {
  return code >= base && code < base + 0x400;
}

function clipOpt(value: string | undefined, max: number): string | undefined {
  return value === undefined ? undefined : clip(value, max);
}

/**
 * Builds "subject: what, expected X, got Y" so every message has the same readable shape. Each part is cut with
 * clip(), so a 4 MB node name or config value makes a message of a few hundred characters, not 4 MB.
 */
export function describe(subject: string, what: string, expected?: string, got?: string): string {
  let s = `${clip(subject, MAX_VALUE)}: ${clip(what, MAX_WHAT)}`;
  if (expected !== undefined) s += `, expected ${clip(expected, MAX_EXPECTED)}`;
  if (got !== undefined) s += `, got ${clip(got, MAX_VALUE)}`;
  return s;
}

/**
 * An error of one code about one subject, worded by describe() ("subject: what, expected X, got Y") and carrying the
 * same subject, expected and got as fields. The packages' own error classes (ShapeError, SafetensorsError,
 * OnnxExportError, the scheduler's InputError, …) extend it and add only their code and name, so the wording and the
 * fields are made in one place.
 */
export class SubjectError extends AttnGraphError {
  constructor(code: ErrorCode, subject: string, what: string, expected?: string, got?: string, cause?: unknown) {
    super(code, describe(subject, what, expected, got), {
      subject,
      ...opt(expected, got),
      ...(cause === undefined ? {} : { cause }),
    });
    this.name = "SubjectError";
  }
}

/** A tensor's shape, strides or element count does not fit what an operation needs. */
export class ShapeError extends SubjectError {
  constructor(subject: string, what: string, expected?: string, got?: string) {
    super("shape", subject, what, expected, got);
    this.name = "ShapeError";
  }
}

/** A feature that is not built (yet): always loud, never a silent fallback. Messages start with "unsupported: ". */
export class UnsupportedError extends AttnGraphError {
  constructor(feature: string, details: ErrorDetails = {}) {
    super("unsupported", `unsupported: ${feature}`, details);
    this.name = "UnsupportedError";
  }
}

function opt(expected?: string, got?: string): { expected?: string; got?: string } {
  const o: { expected?: string; got?: string } = {};
  if (expected !== undefined) o.expected = expected;
  if (got !== undefined) o.got = got;
  return o;
}
