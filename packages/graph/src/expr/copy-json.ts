// A bounded deep copy of a JSON value (an expression attribute): numbers, strings, booleans, null, arrays and plain
// objects' own keys. Shared subtrees are copied as many times as they are reached, so the bound on the nodes copied is
// what keeps a hostile value (2^150 nodes reached through sharing) from taking all memory.
import { GraphValidationError } from "../errors.js";

const MAX_NODES = 10_000;
/** JSON levels: an expression level is two (an object and its `args` list), so checkExpr's 200 levels fit. */
const MAX_LEVELS = 1024;

export function copyJson(value: unknown, subject: string): unknown {
  let nodes = 0;
  const copy = (v: unknown, depth: number): unknown => {
    if (++nodes > MAX_NODES || depth > MAX_LEVELS)
      throw new GraphValidationError(
        subject,
        "expression too large",
        `at most ${MAX_NODES} nodes, ${MAX_LEVELS} JSON levels deep`,
        "more",
      );
    if (v === null || typeof v === "number" || typeof v === "string" || typeof v === "boolean") return v;
    if (Array.isArray(v)) return v.map((x) => copy(x, depth + 1));
    if (typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(v))
        Object.defineProperty(out, k, {
          value: copy((v as Record<string, unknown>)[k], depth + 1),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      return out;
    }
    throw new GraphValidationError(subject, "not a JSON value", "numbers, strings, lists and objects", typeof v);
  };
  return copy(value, 0);
}
