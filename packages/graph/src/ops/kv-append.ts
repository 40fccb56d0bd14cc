import { defineOp } from "../op-def.js";

export interface KvAppendAttrs {
  /** The number of positions already in the cache: a dim name (`P`) a decode session binds per run, or an integer. */
  readonly past: number | string;
  /** The name of the cache's length after the append (past + L) while shapes are symbolic, e.g. `S`. */
  readonly length: string;
}

/**
 * A key/value cache for incremental decoding. `cache` [B, Hkv, M, D] is session state (a weight the decode session
 * allocates, preallocated to M positions); the kernel writes `x` [B, Hkv, L, D] (this call's new keys or values, heads
 * split) into positions [past, past + L) of it, in place, and returns the view of positions [0, past + L):
 * [B, Hkv, past + L, D]. Positions past + L and beyond are never read. The only op that writes into one of its inputs:
 * the scheduler never fuses it, and a decode session runs its calls one after another.
 */
export const kvAppendOp = defineOp<KvAppendAttrs>({
  kind: "kv-append",
  doc: "Writes this call's keys/values [B, Hkv, L, D] into a preallocated cache [B, Hkv, M, D] at `past` and returns the view of the first past + L positions.",
  inputs: [
    { name: "cache", rank: 4, doc: "[B, Hkv, M, D], the decode session's cache (state, written in place)" },
    { name: "x", rank: 4, doc: "[B, Hkv, L, D], this call's new keys or values" },
  ],
  attrs: {
    past: { type: "dim", min: 0, doc: "positions already in the cache: an integer, or a dim name bound per run" },
    length: { type: "string", doc: "the symbolic name of past + L (the key length S)" },
  },
  view: true,
  inferShape: ([cache, x], { past, length }, ctx) => {
    ["B", "Hkv", "", "D"].forEach((name, i) => {
      if (i === 2) return;
      const c = cache![i]!;
      const v = x![i]!;
      if (c !== v && typeof c === typeof v) {
        ctx.fail("x", `dim ${i} (${name}) differs from the cache's`, String(c), String(v));
      }
    });
    const l = x![2]!;
    const m = cache![2]!;
    if (typeof past !== "number" || typeof l !== "number") return [cache![0]!, cache![1]!, length, cache![3]!];
    if (typeof m === "number" && past + l > m) {
      ctx.fail("x", "the cache is full: past + new positions exceed its length", `past + L <= ${m}`, `${past} + ${l} = ${past + l}`);
    }
    return [cache![0]!, cache![1]!, past + l, cache![3]!];
  },
});
