// What a golden case file gives whatever it describes (an attention, a block, a training loop): where it came from,
// the results and gradients to compare, and how closely. case.ts and train-case.ts add what their runners build from.
import type { Tensor, Tolerance } from "@attngraph/tensor";

export interface CaseBase {
  /** The file the case came from, as the caller named it. */
  readonly file: string;
  readonly name: string;
  /** Where the numbers come from ("torch 1.13.1, float64"). */
  readonly source: string;
  readonly expected: Record<string, Tensor>;
  /** Gradients by input or parameter name; empty where the case has none. */
  readonly expectedGrad: Record<string, Tensor>;
  /** A value v passes when |got - v| <= abs + rel·|v|. */
  readonly tolerance: Tolerance;
}
