// adam-moment's attributes as the cpu and wasm kernel tests write them, and the float64 answer to them (each test
// wrote the op's formula out itself): optim64's adamMoment64 with the op's defaults.
import type { AdamMomentAttrs } from "@attngraph/graph";
import { adamMoment64 } from "../reference/optim64.js";

/** adam-moment's attributes as a test writes them: beta, the rest optional. */
export type AdamMomentCase = Pick<AdamMomentAttrs, "beta"> & Partial<AdamMomentAttrs>;

/** adam-moment's answer in float64 for a case: beta · state + (1 − beta) · (g or g²), g = grad + weightDecay · param. */
export const adamMomentCase64 = (
  state: ArrayLike<number>,
  grad: ArrayLike<number>,
  param: ArrayLike<number> | undefined,
  a: AdamMomentCase,
): Float64Array => adamMoment64(state, grad, param, { square: false, weightDecay: 0, ...a });
