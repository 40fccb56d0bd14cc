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

export class AttnGraphError extends Error {
  readonly [MARKER] = true;
  /** A stable machine-readable code, e.g. `shape`, `validation`, `unsupported`. */
  readonly code: string;
  readonly subject: string | undefined;
  readonly expected: string | undefined;
  readonly got: string | undefined;

  constructor(code: string, message: string, details: ErrorDetails = {}) {
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

/** A tensor's shape, strides or element count does not fit what an operation needs. */
export class ShapeError extends AttnGraphError {
  constructor(subject: string, what: string, expected?: string, got?: string) {
    super("shape", describe(subject, what, expected, got), { subject, ...opt(expected, got) });
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
