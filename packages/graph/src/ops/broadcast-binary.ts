// What the elementwise ops with broadcasting (add, mul) declare alike: their two inputs, in-place use of a, and the
// shape rule. Their gradients differ, so each op keeps its own declaration and vjp.
import { broadcastShapes } from "../broadcast.js";
import type { SymShape } from "../dims.js";
import type { OpContext, OpInput } from "../op-def.js";

export const BROADCAST_INPUTS: readonly OpInput[] = [
  { name: "a", doc: "[...]" },
  { name: "b", doc: "[...], broadcastable with a" },
];

/** The broadcast shape of a and b; a mismatch names input b and the axis (counted from the end). */
export function broadcastBinaryShape([a, b]: readonly (SymShape | undefined)[], _attrs: object, ctx: OpContext) {
  return broadcastShapes(a!, b!, (i, da, db) =>
    ctx.fail("b", `shapes do not broadcast at axis ${i} from the end`, `${da} or 1`, String(db)),
  );
}
