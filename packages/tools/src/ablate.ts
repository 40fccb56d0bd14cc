// Head ablation (TransformerLens's zero and mean ablation) as a persistent patch on a per-head value.
import type { Session } from "@attngraph/runtime";
import type { Tensor } from "@attngraph/tensor";
import { checkHeads, editable, forHead, withData } from "./heads.js";

export type AblationMode = "zero" | "mean";

/**
 * Patches `node` (a [B, H, ...] value: `weights`, `context.heads`, `q.heads`, …) in every run until the returned
 * function is called: the listed heads become 0 ("zero"), or each ablated head's values become their mean over the
 * run's batch ("mean", TransformerLens's mean ablation: what the head gives on average, without what this input adds).
 * Other heads are untouched. A head index outside the value's heads fails the run with an OverrideError naming the
 * node; so does a value without a heads axis.
 */
export function ablateHeads(session: Session, node: string, heads: readonly number[], mode: AblationMode = "zero"): () => void {
  if (mode !== "zero" && mode !== "mean") throw new TypeError(`ablateHeads: mode must be "zero" or "mean", got ${String(mode)}`);
  const list = [...heads];
  return session.patch(node, (value) => ablated(node, value, list, mode));
}

/** `value` with `heads` ablated (see ablateHeads). */
export function ablated(node: string, value: Tensor, heads: readonly number[], mode: AblationMode): Tensor {
  checkHeads(node, value, heads);
  const data = editable(value);
  for (const h of heads) {
    if (mode === "zero") {
      forHead(value, h, (start, end) => data.fill(0, start, end));
      continue;
    }
    // The mean over the batch of this head's block, element by element.
    const nb = value.shape[0]!;
    let mean: Float64Array | undefined;
    forHead(value, h, (start, end) => {
      mean ??= new Float64Array(end - start);
      for (let i = start; i < end; i++) mean[i - start]! += data[i]! / nb;
    });
    forHead(value, h, (start, end) => {
      for (let i = start; i < end; i++) data[i] = mean![i - start]!;
    });
  }
  return withData(value, data);
}
