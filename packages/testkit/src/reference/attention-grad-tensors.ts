// A fused-attention-backward test problem with the q, k, v and grad tensors it was made from, and the float64
// gradients paired with the input each one differentiates: what the contract suite and the cpu and wasm
// attention-grad tests all hand to attention-grad, one `wrt` at a time.
import type { Tensor } from "@attngraph/tensor";
import { attentionGradProblem, type AttentionGradCase, type AttentionGradProblem } from "./attention-grad-case.js";

/** The inputs attention-grad differentiates in every test (a score-mod's gathered slots are flex's). */
export type QkvWrt = "q" | "k" | "v";

export interface AttentionGradTensors extends AttentionGradProblem {
  readonly q: Tensor;
  readonly k: Tensor;
  readonly v: Tensor;
  /** [B, H, L, Dv]: the output's gradient. */
  readonly grad: Tensor;
}

/** attentionGradProblem of `t`'s q, k and v, with the four tensors kept beside it. */
export function attentionGradTensors(
  c: AttentionGradCase,
  t: { readonly q: Tensor; readonly k: Tensor; readonly v: Tensor; readonly grad: Tensor },
): AttentionGradTensors {
  return { ...attentionGradProblem(c, t), q: t.q, k: t.k, v: t.v, grad: t.grad };
}

/** attentionGrad64's gradients, each with the `wrt` that asks for it: q, k, v in that order. */
export function gradsByWrt(g: {
  readonly dq: Float64Array;
  readonly dk: Float64Array;
  readonly dv: Float64Array;
}): readonly (readonly [QkvWrt, Float64Array])[] {
  return [
    ["q", g.dq],
    ["k", g.dk],
    ["v", g.dv],
  ];
}
