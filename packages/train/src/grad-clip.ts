// Global gradient-norm clipping in the training graph, torch.nn.utils.clip_grad_norm_(params, maxNorm) before the
// optimizer's step: a chain of sum-squares nodes adds every gradient's squares into one [1] total (each node the
// total so far plus its gradient's; the order is the parameters'), and every gradient is scaled by
// min(1, maxNorm / (sqrt(total) + 1e-6)) by a clip-by-norm node. All of it runs on the executor.
import { GraphValidationError, type GraphBuilder } from "@attngraph/graph";

export interface ClippedGrads {
  /** Parameter → its clipped gradient's node (`<p>.grad.clipped`). */
  readonly grads: Readonly<Record<string, string>>;
  /** The [1] node holding Σ of every gradient's squares (the norm is its square root). */
  readonly sumSquares: string;
}

/** torch's eps in clip_grad_norm_ (added to the total norm before dividing). */
const CLIP_EPS = 1e-6;

/**
 * Adds the clipping nodes for `grads` (parameter → gradient node, in the order the total adds them).
 * @param maxNorm torch's max_norm, a finite number > 0
 */
export function addGradClipping(
  b: GraphBuilder,
  grads: Readonly<Record<string, string>>,
  maxNorm: number,
): ClippedGrads {
  if (typeof maxNorm !== "number" || !(maxNorm > 0) || !Number.isFinite(maxNorm))
    throw new GraphValidationError(
      "train.clipGradNorm",
      "invalid maximum norm",
      "a finite number > 0",
      String(maxNorm),
    );
  const params = Object.keys(grads);
  if (params.length === 0)
    throw new GraphValidationError(
      "train.clipGradNorm",
      "no gradient to clip",
      "at least one parameter the loss reaches",
      "none",
    );
  let total: string | undefined;
  for (const p of params)
    total = b.add("sum-squares", `${p}.grad.sumsq`, { x: grads[p]!, ...(total ? { acc: total } : {}) }, {});
  const clipped = Object.fromEntries(
    params.map((p) => [
      p,
      b.add("clip-by-norm", `${p}.grad.clipped`, { x: grads[p]!, sumSquares: total! }, { maxNorm, eps: CLIP_EPS }),
    ]),
  );
  return { grads: clipped, sumSquares: total! };
}
