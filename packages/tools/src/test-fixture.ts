// The tools' test problem: a small causal multi-head attention on cpu with seeded weights, a clean and a corrupted
// input, and the float64 output without one head (the reference for ablation).
import { attentionWeights, buildAttention, normalizeConfig } from "@attngraph/attention";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { compile, type Session } from "@attngraph/runtime";
import { Tensor } from "@attngraph/tensor";
import {
  linear64,
  mergeHeads64,
  mulberry32,
  referenceAttention,
  splitHeads64,
  weightedSum64,
} from "@attngraph/testkit";

export const config = normalizeConfig({ dIn: 8, dOut: 12, numHeads: 3, causal: true, outProj: true, outBias: true });
export const [B, T, H, D, E] = [2, 5, 3, 4, 12] as const;
const next = mulberry32(5);
export const u = (shape: number[], scale: number) =>
  new Tensor(
    Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => (next() * 2 - 1) * scale),
    shape,
  );
const raw = {
  W_query: u([E, 8], 0.35),
  W_key: u([E, 8], 0.35),
  W_value: u([E, 8], 0.35),
  out_proj: u([E, E], 0.29),
  out_bias: u([E], 0.5),
};
export const clean = u([B, T, 8], 1);
export const corrupted = u([B, T, 8], 1);
export const weights = attentionWeights(config, raw);
export const session = (): Promise<Session> =>
  compile(buildAttention(config), { executors: [createCpuExecutor()], weights });
export const sum = (t: Tensor): number => t.toFloat32Array().reduce((a, b) => a + b, 0);

/** The float64 output on `clean` with head `h`'s weights zeroed before the weighted sum. */
export function referenceWithout(h: number): Float64Array {
  const ref = referenceAttention(config, raw, { x: clean });
  const w = Float64Array.from(ref.weights.data);
  for (let b = 0; b < B; b++) w.fill(0, (b * H + h) * T * T, (b * H + h + 1) * T * T);
  const context = mergeHeads64(
    weightedSum64(w, splitHeads64(Float64Array.from(ref.values.data), B, T, H, D), { B, H, Hkv: H, L: T, S: T, D }),
    B,
    H,
    T,
    D,
  );
  return linear64(
    context,
    E,
    Float64Array.from(raw.out_proj.toFloat32Array()),
    E,
    Float64Array.from(raw.out_bias.toFloat32Array()),
  );
}
