// A float64 reference of the fused attention with score and mask modifications (@attngraph/graph attention-mods.ts):
// forward output, lse, and the gradients of q, k, v (attention-grad.ts's doc), written straight from the definition,
// element by element, so the fused kernels (every executor's) are checked against something that shares none of their code. The
// expressions run through compileExpr in float64; the derivative through derive().
import { compileExpr, derive, type Expr, type GatheredTensor } from "@attngraph/graph";
import { referenceDropoutKeep } from "./dropout64.js";
import type { AttentionDims64 } from "./ops64.js";

export interface Flex64 {
  readonly dims: AttentionDims64;
  readonly q: ArrayLike<number>;
  readonly k: ArrayLike<number>;
  readonly v: ArrayLike<number>;
  readonly causal: boolean;
  readonly window: number | null;
  readonly alignment: "top-left" | "bottom-right";
  readonly scale: number;
  /** [B, S], 1 = padded. */
  readonly pad?: ArrayLike<number>;
  readonly dropout?: { readonly rate: number; readonly seed: number };
  readonly scoreMod: Expr | null;
  readonly maskMod: Expr | null;
  readonly gathered: ReadonlyMap<string, GatheredTensor>;
}

interface Row {
  /** s'_ij (−∞ where hidden), s_ij, p_ij, m_ij per key j. */
  readonly sm: Float64Array;
  readonly s: Float64Array;
  readonly p: Float64Array;
  readonly m: Float64Array;
  readonly lse: number;
}

function rowOf(f: Flex64, b: number, h: number, i: number): Row {
  const { H, Hkv, L, S, D } = f.dims;
  const kh = Math.floor(h / (H / Hkv));
  const score =
    f.scoreMod === null ? undefined : compileExpr(f.scoreMod, f.gathered, "ref.scoreMod", { float64: true });
  const mask = f.maskMod === null ? undefined : compileExpr(f.maskMod, f.gathered, "ref.maskMod", { float64: true });
  const off = f.alignment === "bottom-right" ? S - L : 0;
  const sm = new Float64Array(S).fill(-Infinity);
  const s = new Float64Array(S);
  const m = new Float64Array(S);
  for (let j = 0; j < S; j++) {
    if (f.causal && j > i + off) continue;
    if (f.window !== null && j <= i + off - f.window) continue;
    if (f.pad && f.pad[b * S + j] === 1) continue;
    if (mask && !mask(0, b, h, i, j)) continue;
    let raw = 0;
    for (let c = 0; c < D; c++) raw += f.q[((b * H + h) * L + i) * D + c]! * f.k[((b * Hkv + kh) * S + j) * D + c]!;
    s[j] = f.scale * raw;
    sm[j] = score ? (score(s[j]!, b, h, i, j) as number) : s[j]!;
    const e = ((b * H + h) * L + i) * S + j;
    m[j] =
      f.dropout && f.dropout.rate > 0
        ? referenceDropoutKeep(f.dropout.seed, e, f.dropout.rate)
          ? Math.fround(1 / (1 - f.dropout.rate))
          : 0
        : 1;
  }
  const max = Math.max(...sm);
  const p = new Float64Array(S);
  if (max === -Infinity) return { sm, s, p, m, lse: -Infinity };
  let sum = 0;
  for (let j = 0; j < S; j++) sum += sm[j] === -Infinity ? 0 : Math.exp(sm[j]! - max);
  for (let j = 0; j < S; j++) p[j] = sm[j] === -Infinity ? 0 : Math.exp(sm[j]! - max) / sum;
  return { sm, s, p, m, lse: max + Math.log(sum) };
}

/** out [B, H, L, Dv] and lse [B, H, L]. */
export function flexForward64(f: Flex64): { out: Float64Array; lse: Float64Array } {
  const { B, H, Hkv, L, S, Dv } = f.dims;
  const out = new Float64Array(B * H * L * Dv);
  const lse = new Float64Array(B * H * L);
  for (let b = 0; b < B; b++)
    for (let h = 0; h < H; h++)
      for (let i = 0; i < L; i++) {
        const r = rowOf(f, b, h, i);
        const row = (b * H + h) * L + i;
        lse[row] = r.lse;
        const kh = Math.floor(h / (H / Hkv));
        for (let j = 0; j < S; j++) {
          const w = r.p[j]! * r.m[j]!;
          if (w === 0) continue;
          for (let c = 0; c < Dv; c++) out[row * Dv + c]! += w * f.v[((b * Hkv + kh) * S + j) * Dv + c]!;
        }
      }
  return { out, lse };
}

/** dq [B, H, L, D], dk [B, Hkv, S, D], dv [B, Hkv, S, Dv] of Σ grad ⊙ out. */
export function flexGrad64(
  f: Flex64,
  grad: ArrayLike<number>,
): { dq: Float64Array; dk: Float64Array; dv: Float64Array } {
  const { B, H, Hkv, L, S, D, Dv } = f.dims;
  const dScore =
    f.scoreMod === null
      ? undefined
      : compileExpr(derive(f.scoreMod, { kind: "score" }), f.gathered, "ref.dScore", { float64: true });
  const dq = new Float64Array(B * H * L * D);
  const dk = new Float64Array(B * Hkv * S * D);
  const dv = new Float64Array(B * Hkv * S * Dv);
  for (let b = 0; b < B; b++)
    for (let h = 0; h < H; h++)
      for (let i = 0; i < L; i++) {
        const r = rowOf(f, b, h, i);
        const row = (b * H + h) * L + i;
        const kh = Math.floor(h / (H / Hkv));
        const gv = (j: number) => {
          let d = 0;
          for (let c = 0; c < Dv; c++) d += grad[row * Dv + c]! * f.v[((b * Hkv + kh) * S + j) * Dv + c]!;
          return d;
        };
        let delta = 0;
        for (let j = 0; j < S; j++) if (r.p[j] !== 0) delta += r.p[j]! * r.m[j]! * gv(j);
        for (let j = 0; j < S; j++) {
          if (r.p[j] === 0) continue;
          const kRow = ((b * Hkv + kh) * S + j) * D;
          for (let c = 0; c < Dv; c++)
            dv[((b * Hkv + kh) * S + j) * Dv + c]! += r.m[j]! * r.p[j]! * grad[row * Dv + c]!;
          const dsm = r.p[j]! * (r.m[j]! * gv(j) - delta);
          if (dsm === 0) continue;
          const ds = dsm * f.scale * (dScore ? (dScore(r.s[j]!, b, h, i, j) as number) : 1);
          for (let c = 0; c < D; c++) {
            dq[row * D + c]! += ds * f.k[kRow + c]!;
            dk[kRow + c]! += ds * f.q[row * D + c]!;
          }
        }
      }
  return { dq, dk, dv };
}
