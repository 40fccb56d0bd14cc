// attention-grad's inputs in the op's order, for the executors' attention-grad tests: a problem's own tensors, any of
// them replaced (a strided view, a NaN planted, a tensor of the wrong shape) to test one input at a time.
import type { AnyTensor, Tensor } from "@attngraph/tensor";

type Replaceable = "q" | "k" | "v" | "out" | "grad" | "lse";

/** q, k, v, out, grad, lse and pad of `m`, each taken from `over` where given there. */
export function attentionGradInputs<T extends AnyTensor>(
  m: Readonly<Record<Replaceable, T>> & { readonly pad: Tensor | undefined },
  over: Partial<Record<Replaceable, T>> = {},
): (T | Tensor | undefined)[] {
  return [
    over.q ?? m.q,
    over.k ?? m.k,
    over.v ?? m.v,
    over.out ?? m.out,
    over.grad ?? m.grad,
    over.lse ?? m.lse,
    m.pad,
  ];
}
