import { SubjectError, type ErrorCode } from "@attngraph/tensor";

/**
 * A graph that cannot be built or compiled as given: a wrong shape, a missing or unknown input, a cycle, an unknown op
 * kind, a bad attribute. `subject` names the node (or `node.field`); the message says what was expected and what came.
 * `code` is "validation" unless more specific: "duplicate-name", "dangling-edge", "cycle", "unknown-op", "duplicate-op".
 * `cause` keeps the original error when a user's shape rule or attribute check threw something else.
 */
export class GraphValidationError extends SubjectError {
  constructor(
    subject: string,
    what: string,
    expected?: string,
    got?: string,
    code: ErrorCode = "validation",
    cause?: unknown,
  ) {
    super(code, subject, what, expected, got, cause);
    this.name = "GraphValidationError";
  }
}

/** A serialized graph (JSON) that does not follow the format; `subject` is the JSON path of the field. */
export class GraphFormatError extends SubjectError {
  constructor(path: string, what: string, expected?: string, got?: string, cause?: unknown) {
    super("format", path, what, expected, got, cause);
    this.name = "GraphFormatError";
  }
}

const MAX_SHOW = 80;

/**
 * A short, bounded rendering of any value for error messages. It looks only at the first few items and levels, so a
 * 10 MB string or a deeply nested array costs no more than a small one (JSON.stringify would walk all of it, and
 * overflow the stack on deep nesting).
 */
export function show(value: unknown): string {
  let s: string;
  try {
    s = render(value, 0, { left: MAX_SHOW + 1 });
  } catch {
    s = typeof value; // a throwing getter or proxy: say at least what kind of value it was
  }
  return s.length > MAX_SHOW ? `${s.slice(0, MAX_SHOW - 3)}...` : s;
}

function render(v: unknown, depth: number, budget: { left: number }): string {
  if (budget.left <= 0) return "...";
  let s: string;
  if (typeof v === "string") s = JSON.stringify(v.length > MAX_SHOW ? v.slice(0, MAX_SHOW) : v);
  else if (typeof v === "number")
    s = String(v); // NaN and Infinity by name (JSON.stringify would say null)
  else if (v === undefined || v === null || typeof v === "boolean" || typeof v === "bigint") s = String(v);
  else if (typeof v === "symbol" || typeof v === "function") s = typeof v;
  else if (Array.isArray(v)) {
    if (depth >= 4) return "[...]";
    const items: string[] = [];
    for (let i = 0; i < v.length && budget.left > 0; i++) items.push(render(v[i], depth + 1, budget));
    if (items.length < v.length) items.push("...");
    s = `[${items.join(",")}]`;
  } else {
    if (depth >= 4) return "{...}";
    const keys = Object.keys(v as object);
    const items: string[] = [];
    for (let i = 0; i < keys.length && budget.left > 0; i++) {
      const k = keys[i]!;
      items.push(`${render(k, depth + 1, budget)}:${render((v as Record<string, unknown>)[k], depth + 1, budget)}`);
    }
    if (items.length < keys.length) items.push("...");
    s = `{${items.join(",")}}`;
  }
  budget.left -= s.length;
  return s;
}
