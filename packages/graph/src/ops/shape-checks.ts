import { formatDims, sameDim, type Dim, type SymShape } from "../dims.js";
import type { OpContext } from "../op-def.js";

/** Fails naming `field` unless the two dims can be equal. */
export function expectDim(
  ctx: OpContext,
  field: string,
  what: string,
  expected: Dim,
  got: Dim,
  shape?: SymShape,
): void {
  if (!sameDim(expected, got)) {
    ctx.fail(field, what, String(expected), shape ? `${got} in ${formatDims(shape)}` : String(got));
  }
}

/** Heads H must be a multiple of key/value heads Hkv (grouped-query attention). Unknown dims pass until bound. */
export function expectHeadGroups(ctx: OpContext, field: string, h: Dim, hkv: Dim): void {
  // No heads on either side (an empty tensor) is consistent; 0 key/value heads for some query heads is not.
  if (typeof h === "number" && typeof hkv === "number" && (hkv === 0 ? h !== 0 : h % hkv !== 0)) {
    ctx.fail(field, "query heads must be a multiple of key/value heads", `a divisor of H=${h}`, `Hkv=${hkv}`);
  }
}

/** Fails naming `field` unless `got` can have `expected`'s shape (same rank, every dim possibly equal). */
export function expectSameShape(ctx: OpContext, field: string, expected: SymShape, got: SymShape): void {
  if (expected.length !== got.length || !expected.every((d, i) => sameDim(d, got[i]!))) {
    ctx.fail(field, "shape must match", formatDims(expected), formatDims(got));
  }
}

/** A one-element value: [] or [1] (a symbolic dim passes until bound), such as an optimizer's step count. */
export function expectOneElement(ctx: OpContext, field: string, what: string, s: SymShape): void {
  if (!(s.length === 0 || (s.length === 1 && (s[0] === 1 || typeof s[0] === "string"))))
    ctx.fail(field, what, "[] or [1]", formatDims(s));
}

/** Fails naming `field` unless `s` has an axis to work along (`who` names the op or the norm in the message). */
export function expectAxis(ctx: OpContext, field: string, who: string, s: SymShape): void {
  if (s.length < 1) ctx.fail(field, `${who} needs at least one axis`, "rank >= 1", "a scalar");
}
