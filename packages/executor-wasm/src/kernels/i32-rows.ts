// The `rows` attribute of embedding-grad (V) and position-embedding-grad (P) as the module takes it: an integer >= 1 by
// its spec, and below 2^31 here, where the module indexes rows and counts elements with an i32 (the declaration allows
// any safe integer: the rule is this executor's).
import { attrError } from "@attngraph/graph";
import type { Call } from "./adapter.js";

/** `rows` (the table's row count, named `legend` in the error: V or P), checked to fit an i32. */
export function i32Rows(call: Call, rows: number, legend: string): number {
  if (rows >= 2 ** 31) throw attrError(call, "rows", `an integer below 2^31 (${legend}, the table's rows)`, rows);
  return rows;
}
