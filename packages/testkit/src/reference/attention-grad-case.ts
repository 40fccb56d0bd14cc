// One fused-attention-backward test problem from its description and its q, k, v, grad tensors (each test draws those
// its own way: strided, poisoned, on an executor): the float64 problem, the padding mask, `out` and `lse` as the forward
// would give them (the references' values in float32), and the normalized attributes of attention-lse and
// attention-grad. Shared by the contract suite and the executors' own kernel tests.
// Legend: B batch, H heads, Hkv kv heads, L queries, S keys, D head dim of q and k, Dv head dim of v.
import { Tensor } from "@attngraph/tensor";
import type { AttentionGradAttrs, AttentionLseAttrs } from "@attngraph/graph";
import { attentionLse64, attentionOut64, type AttentionProblem64 } from "./attention-grad64.js";
import type { AttentionDims64 } from "./ops64.js";

export interface AttentionGradCase extends AttentionDims64 {
  readonly causal?: boolean;
  readonly window?: number;
  readonly alignment?: "top-left" | "bottom-right";
  readonly scale: number;
  /** [B, S] padding flags, 1 = padded key. */
  readonly pad?: (b: number, j: number) => number;
  /** Training-mode dropout on the weights. */
  readonly dropout?: { readonly rate: number; readonly seed: number };
}

export interface AttentionGradProblem {
  readonly problem: AttentionProblem64;
  readonly pad: Tensor | undefined;
  /** [B, H, L, Dv]: the float64 forward's output in float32. */
  readonly out: Tensor;
  /** [B, H, L]: the float64 lse in float32 (−∞ for a row that sees no key). */
  readonly lse: Tensor;
  readonly lseAttrs: AttentionLseAttrs;
  attrs(wrt: AttentionGradAttrs["wrt"]): AttentionGradAttrs;
  /** The gradient's shape: q's, k's or v's. */
  shapeOf(wrt: AttentionGradAttrs["wrt"]): number[];
}

const f64 = (t: { toFloat32Array(): Float32Array }): Float64Array => Float64Array.from(t.toFloat32Array());

export function attentionGradProblem(
  c: AttentionGradCase,
  t: { readonly q: Tensor; readonly k: Tensor; readonly v: Tensor },
): AttentionGradProblem {
  const pad = c.pad
    ? Tensor.from(
        Array.from({ length: c.B * c.S }, (_, e) => c.pad!(Math.floor(e / c.S), e % c.S)),
        [c.B, c.S],
      )
    : undefined;
  const mask = { causal: c.causal ?? false, window: c.window ?? null, alignment: c.alignment ?? "top-left" } as const;
  const problem: AttentionProblem64 = {
    q: f64(t.q),
    k: f64(t.k),
    v: f64(t.v),
    ...(pad ? { pad: f64(pad) } : {}),
    dims: { B: c.B, H: c.H, Hkv: c.Hkv, L: c.L, S: c.S, D: c.D, Dv: c.Dv },
    mask,
    scale: c.scale,
    ...(c.dropout ? { dropout: c.dropout } : {}),
  };
  const out = Tensor.from(Float32Array.from(attentionOut64(problem)), [c.B, c.H, c.L, c.Dv]);
  const lse = Tensor.from(Float32Array.from(attentionLse64(problem)), [c.B, c.H, c.L]);
  const lseAttrs: AttentionLseAttrs = { ...mask, scale: c.scale };
  const drop = c.dropout ?? { rate: 0, seed: 0 };
  return {
    problem,
    pad,
    out,
    lse,
    lseAttrs,
    attrs: (wrt) => ({
      ...lseAttrs,
      dropoutRate: drop.rate,
      dropoutSeed: drop.seed,
      training: c.dropout !== undefined,
      wrt,
    }),
    shapeOf: (wrt) =>
      wrt === "q" ? [c.B, c.H, c.L, c.D] : wrt === "k" ? [c.B, c.Hkv, c.S, c.D] : [c.B, c.Hkv, c.S, c.Dv],
  };
}
