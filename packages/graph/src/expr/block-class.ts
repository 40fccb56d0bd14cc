// Block sparsity from a mask modification (FlexAttention's BlockMask, found without a pass over every element): for a
// block of queries × keys (and one batch and head, or all of them), whether the mask hides every pair ("none"), keeps
// every pair ("all") or may do either ("some"), by interval arithmetic over the block's ranges of b, h, q and kv. A
// gathered read takes the min and max of its input over the box its index intervals span (document ids of a block's
// queries), so a document mask skips the blocks that pair two documents. Conservative: whatever cannot be bounded
// (a NaN in an input, a huge box, mod by a variable) is "some", and the kernel evaluates that block per element.
// The arithmetic is intervals.ts's.
import type { GatheredTensor } from "./compile.js";
import { Intervals, type VarRanges } from "./intervals.js";
import { isInput, type Expr } from "./types.js";

/** 0: every pair hidden; 1: some may be seen; 2: every pair seen. */
export type BlockClass = 0 | 1 | 2;
export const BLOCK_NONE: BlockClass = 0;
export const BLOCK_SOME: BlockClass = 1;
export const BLOCK_ALL: BlockClass = 2;

/** The class of a block for mask modification `keep` (checked), its gathered inputs bound. */
export function classifyBlock(
  keep: Expr,
  ranges: VarRanges,
  gathered: ReadonlyMap<string, GatheredTensor>,
): BlockClass {
  const [canFalse, canTrue] = new Intervals(ranges, gathered).bool(keep);
  return !canTrue ? BLOCK_NONE : canFalse ? BLOCK_SOME : BLOCK_ALL;
}

/** Which position variables an expression reads (a block's class depends on no other). */
export function varsRead(e: Expr, out: Set<string> = new Set()): Set<string> {
  if (typeof e === "string") out.add(e);
  else if (typeof e === "object") for (const a of isInput(e) ? e.index : e.args) varsRead(a, out);
  return out;
}

/**
 * The classes of a mask modification's blocks for one kernel call, each found once: a block's class depends only on
 * the variables the expression reads (a document mask reads b, q, kv: its classes are shared by every head).
 */
export class BlockClasses {
  readonly #keep: Expr;
  readonly #gathered: ReadonlyMap<string, GatheredTensor>;
  readonly #byB: boolean;
  readonly #byH: boolean;
  /** Whether a class depends on the batch (the expression reads b) or on the head (reads h). */
  get readsB(): boolean {
    return this.#byB;
  }
  get readsH(): boolean {
    return this.#byH;
  }
  readonly #memo = new Map<string, BlockClass>();

  constructor(keep: Expr, gathered: ReadonlyMap<string, GatheredTensor>) {
    this.#keep = keep;
    this.#gathered = gathered;
    const vars = varsRead(keep);
    this.#byB = vars.has("b");
    this.#byH = vars.has("h");
  }

  /** The class of queries [q0, q1) × keys [kv0, kv1) of batch b, head h. */
  of(b: number, h: number, q0: number, q1: number, kv0: number, kv1: number): BlockClass {
    const key = `${this.#byB ? b : 0},${this.#byH ? h : 0},${q0},${q1},${kv0},${kv1}`;
    let c = this.#memo.get(key);
    if (c === undefined) {
      c = classifyBlock(this.#keep, { b: [b, b], h: [h, h], q: [q0, q1 - 1], kv: [kv0, kv1 - 1] }, this.#gathered);
      this.#memo.set(key, c);
    }
    return c;
  }
}
