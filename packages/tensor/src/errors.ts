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
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = "AttnGraphError";
    this.code = code;
    this.subject = details.subject;
    this.expected = details.expected;
    this.got = details.got;
  }

  static isInstance(value: unknown): value is AttnGraphError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[MARKER] === true;
  }
}

/** Builds "subject: what, expected X, got Y" so every message has the same readable shape. */
export function describe(subject: string, what: string, expected?: string, got?: string): string {
  let s = `${subject}: ${what}`;
  if (expected !== undefined) s += `, expected ${expected}`;
  if (got !== undefined) s += `, got ${got}`;
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
