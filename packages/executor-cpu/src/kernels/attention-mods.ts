// The fused attention's modifications on a block of raw scores (attention-mods.ts in @attngraph/graph): the streaming
// loops compute q·kᵀ for a [BQ, BK] block, then this rewrites it in place to what the softmax sees, s' or −∞ where
// the mask modification hides the key, so the loops run unchanged with a scale of 1 (−∞ is already their "hidden").
// Elements outside the rows' visible ranges are rewritten too (never read afterwards): one tight loop per block.
import {
  BLOCK_SOME,
  compileMods,
  hasMods,
  type AttentionMods,
  type BlockClass,
  type CompiledMods,
} from "@attngraph/graph";
import type { Call } from "./adapter.js";
import { gatheredOf } from "./gathered.js";
import type { QueryBlock } from "./query-block.js";

/** The call's modifications compiled against its gathered inputs (slots from `first`), or undefined without any. */
export function compiledMods(call: Call, first: number, derivative: boolean): CompiledMods | undefined {
  const attrs = call.attrs as AttentionMods;
  return hasMods(attrs) ? compileMods(attrs, gatheredOf(call, first), call.node, derivative) : undefined;
}

/** The block's class under the mask modification: BLOCK_NONE blocks are skipped, BLOCK_ALL ones not masked per pair. */
export function blockClass(m: CompiledMods | undefined, qb: QueryBlock, s0: number, bc: number): BlockClass {
  return m?.blocks === undefined ? BLOCK_SOME : m.blocks.of(qb.b, qb.h, qb.i0, qb.i0 + qb.br, s0, s0 + bc);
}

/**
 * Rows [0, br) and keys [0, bc) of block `sb` (row stride `stride`), the rows of query block `qb` and keys from s0:
 * raw → s' (s = scale · raw) or −∞. With `dm`, also ∂s'/∂s per element (1 without a score modification).
 * `keepAll`: the block's class says the mask keeps every pair, so it is not evaluated.
 */
export function modifyBlock(
  m: CompiledMods,
  scale: number,
  sb: Float64Array,
  stride: number,
  qb: QueryBlock,
  s0: number,
  bc: number,
  keepAll: boolean,
  dm?: Float64Array,
): void {
  const { b, h, i0, br } = qb;
  const { score, dScore } = m;
  const keep = keepAll ? undefined : m.keep;
  for (let r = 0; r < br; r++) {
    const i = i0 + r;
    for (let c = 0, o = r * stride; c < bc; c++, o++) {
      const j = s0 + c;
      if (keep !== undefined && !keep(0, b, h, i, j)) {
        sb[o] = -Infinity;
        continue;
      }
      if (score === undefined) {
        sb[o] = scale * sb[o]!;
        if (dm !== undefined) dm[o] = 1;
        continue;
      }
      const s = Math.fround(scale * sb[o]!);
      sb[o] = score(s, b, h, i, j) as number;
      if (dm !== undefined) dm[o] = dScore!(s, b, h, i, j) as number;
    }
  }
}
