import { defineOp } from "../op-def.js";
import { perHeadInput } from "./attention-parts.js";

/**
 * The dims a decode graph's nodes name and a decode session binds on every call: `P` the positions in the cache before
 * this call, `Q` the positions a sliding window's cache drops from its front first (0 until it fills), `N` the absolute
 * position of this call's first token (RoPE's offset: equal to P until a window's cache drops positions).
 */
export const DECODE_DIMS = { past: "P", shift: "Q", position: "N" } as const;

export interface KvAppendAttrs {
  /** The number of positions in the cache before the append (after the shift): a dim name (`P`) or an integer. */
  readonly past: number | string;
  /**
   * Positions dropped from the cache's front first: positions [shift, shift + past) move to [0, past), then x is
   * written after them. A sliding window's decode session sets it when the cache is full (its ring); 0 otherwise.
   */
  readonly shift: number | string;
  /** The name of the cache's length after the append (past + L) while shapes are symbolic, e.g. `S`. */
  readonly length: string;
}

/**
 * A key/value cache for incremental decoding. `cache` [B, Hkv, M, D] is session state (a weight the decode session
 * allocates, preallocated to M positions); the kernel first moves positions [shift, shift + past) to the front (a
 * window's cache dropping what no query will see again; nothing moves with shift 0), then writes `x` [B, Hkv, L, D]
 * (this call's new keys or values, heads split) into positions [past, past + L), in place, and returns the view of
 * positions [0, past + L):
 * [B, Hkv, past + L, D]. Positions past + L and beyond are never read. The only op that writes into one of its inputs:
 * the scheduler never fuses it, and a decode session runs its calls one after another.
 */
export const kvAppendOp = defineOp<KvAppendAttrs>({
  kind: "kv-append",
  doc: "Writes this call's keys/values [B, Hkv, L, D] into a preallocated cache [B, Hkv, M, D] at `past` and returns the view of the first past + L positions.",
  inputs: [
    perHeadInput("cache", "[B, Hkv, M, D], the decode session's cache (state, written in place)"),
    perHeadInput("x", "[B, Hkv, L, D], this call's new keys or values"),
  ],
  attrs: {
    past: { type: "dim", min: 0, doc: "positions already in the cache: an integer, or a dim name bound per run" },
    shift: {
      type: "dim",
      default: 0,
      min: 0,
      doc: "positions dropped from the front first (a window's ring); 0 = none",
    },
    length: { type: "string", doc: "the symbolic name of past + L (the key length S)" },
  },
  view: true,
  outputHeads: 1,
  inferShape: ([cache, x], { past, shift, length }, ctx) => {
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
      ctx.fail(
        "past",
        "the cache is full: past + new positions exceed its length",
        `past + L <= ${m}`,
        `${past} + ${l} = ${past + l}`,
      );
    }
    if (typeof m === "number" && typeof shift === "number" && shift + past > m) {
      ctx.fail("shift", "the positions to move run past the cache's end", `shift + past <= ${m}`, `${shift} + ${past}`);
    }
    return [cache![0]!, cache![1]!, past + l, cache![3]!];
  },
});
