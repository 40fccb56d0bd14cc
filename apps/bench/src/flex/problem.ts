// The inputs of `--problem flex`, seeded like every other problem: the layer rows get the attention problem's x and
// weights (makeProblem, same seed, so a layer row at T is the default problem's computation plus the variant); the
// core rows get q, k, v already in heads layout [B, H, T, D], from a stream of their own. What a variant gathers
// (slopes, a 0/1 mask, document ids) is drawn on demand: the mask is [T, T], 1 GiB at T = 16384.
import { makeProblem, mulberry32, type Problem } from "../problem.js";
import type { BenchShape } from "../shapes.js";
import { alibiSlopes, FLEX_CONSTANTS, type FlexConstants, type FlexMods } from "./variants.js";

export interface FlexProblem {
  readonly kind: "flex";
  readonly shape: BenchShape;
  readonly constants: FlexConstants;
  /** x [b, T, d] and the layer's weights, as the default attention problem has them. */
  readonly layer: Problem;
  /** [b, H, T, D] each (D = d / H), uniform in [-1, 1). */
  readonly q: Float32Array;
  readonly k: Float32Array;
  readonly v: Float32Array;
  /** 1/√D, the score scale of every variant. */
  readonly scale: number;
  readonly seed: number;
}

export function makeFlexProblem(shape: BenchShape, constants: FlexConstants = FLEX_CONSTANTS, seed = 42): FlexProblem {
  const { b, t, d } = shape;
  const rand = mulberry32(seed + 4);
  const uniform = (n: number) => Float32Array.from({ length: n }, () => rand() * 2 - 1);
  const n = b * t * d; // b · H · T · D
  const layer = makeProblem(shape, seed);
  return {
    kind: "flex",
    shape,
    constants,
    layer,
    q: uniform(n),
    k: uniform(n),
    v: uniform(n),
    scale: layer.scale,
    seed,
  };
}

/** A gathered tensor: its data (float32; ids and 0/1 as numbers) and shape. */
export interface Gathered {
  readonly data: Float32Array;
  readonly shape: readonly number[];
}

/**
 * The tensors a variant's expressions gather from, by name:
 *  - slopes [H]: the ALiBi paper's;
 *  - mask [T, T]: 0/1, 1 on and below the diagonal except seeded holes (about 1 in 8 keys off the diagonal hidden),
 *    the upper triangle random too (causal hides it anyway), so a row never loses its own key;
 *  - doc [B, T]: document ids, packed documents of seeded lengths between T/16 and T/4 (at least 1).
 */
export function flexGathered(p: FlexProblem, mods: Pick<FlexMods, "gathered">): Record<string, Gathered> {
  const { b, t, h } = p.shape;
  const out: Record<string, Gathered> = {};
  for (const name of mods.gathered) {
    if (name === "slopes") out[name] = { data: Float32Array.from(alibiSlopes(h)), shape: [h] };
    else if (name === "mask") out[name] = { data: userMask(t, p.seed), shape: [t, t] };
    else out[name] = { data: documentIds(b, t, p.seed), shape: [b, t] };
  }
  return out;
}

function userMask(t: number, seed: number): Float32Array {
  const rand = mulberry32(seed + 5);
  const m = new Float32Array(t * t);
  for (let i = 0; i < t; i++) for (let j = 0; j < t; j++) m[i * t + j] = i === j || rand() >= 0.125 ? 1 : 0;
  return m;
}

function documentIds(b: number, t: number, seed: number): Float32Array {
  const rand = mulberry32(seed + 6);
  const lo = Math.max(1, Math.ceil(t / 16));
  const hi = Math.max(lo, Math.ceil(t / 4));
  const ids = new Float32Array(b * t);
  for (let r = 0; r < b; r++) {
    let doc = 0;
    for (let start = 0; start < t; doc++) {
      const len = lo + Math.floor(rand() * (hi - lo + 1));
      for (let i = start; i < Math.min(t, start + len); i++) ids[r * t + i] = doc;
      start += len;
    }
  }
  return ids;
}
