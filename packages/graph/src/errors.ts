import { AttnGraphError, describe } from "@attngraph/tensor";

/**
 * A graph that cannot be built or compiled as given: a wrong shape, a missing or unknown input, a cycle, an unknown op
 * kind, a bad attribute. `subject` names the node (or `node.field`); the message says what was expected and what came.
 */
export class GraphValidationError extends AttnGraphError {
  constructor(subject: string, what: string, expected?: string, got?: string, code = "validation") {
    super(code, describe(subject, what, expected, got), {
      subject,
      ...(expected === undefined ? {} : { expected }),
      ...(got === undefined ? {} : { got }),
    });
    this.name = "GraphValidationError";
  }
}

/** A serialized graph (JSON) that does not follow the format; `subject` is the JSON path of the field. */
export class GraphFormatError extends AttnGraphError {
  constructor(path: string, what: string, expected?: string, got?: string) {
    super("format", describe(path, what, expected, got), {
      subject: path,
      ...(expected === undefined ? {} : { expected }),
      ...(got === undefined ? {} : { got }),
    });
    this.name = "GraphFormatError";
  }
}

/** A short, bounded rendering of any value for error messages. */
export function show(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (value === undefined) return "undefined";
  let s: string;
  try {
    s = JSON.stringify(value) ?? String(value);
  } catch {
    s = String(value);
  }
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}
