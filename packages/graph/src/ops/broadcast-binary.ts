// What the elementwise ops with broadcasting (add, mul) declare alike: their two inputs, no attributes, in-place use
// of a, and the shape rule. Their gradients differ, so each op keeps its own declaration and vjp.
import { broadcastShapes } from "../broadcast.js";
import type { SymShape } from "../dims.js";
import type { OpContext, OpDef, OpInput } from "../op-def.js";

const BROADCAST_INPUTS: readonly OpInput[] = [
  { name: "a", doc: "[...]" },
  { name: "b", doc: "[...], broadcastable with a" },
];

/** The broadcast shape of a and b; a mismatch names input b and the axis (counted from the end). */
function broadcastBinaryShape([a, b]: readonly (SymShape | undefined)[], _attrs: object, ctx: OpContext) {
  return broadcastShapes(a!, b!, (i, da, db) =>
    ctx.fail("b", `shapes do not broadcast at axis ${i} from the end`, `${da} or 1`, String(db)),
  );
}

/** The declaration add and mul share, spread into each. */
export const BROADCAST_BINARY = {
  inputs: BROADCAST_INPUTS,
  attrs: {},
  // The output may take a's memory when it has a's size (the planner checks sizes: a stretched `a` never qualifies).
  inPlace: 0,
  inferShape: broadcastBinaryShape,
} as const satisfies Partial<OpDef<Record<string, never>>>;
