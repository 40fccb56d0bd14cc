// Head ablation (TransformerLens's zero and mean ablation) as a persistent patch on a per-head value.
import { GraphValidationError } from "@attngraph/graph";
import type { Session } from "@attngraph/runtime";
import type { Tensor } from "@attngraph/tensor";
import { checkHeads, editable, forHead, withData } from "./heads.js";
import { requireHeadsAxis } from "./heads-axis.js";

export type AblationMode = "zero" | "mean";

/**
 * Patches `node` (a per-head value: `weights`, `context.heads`, `q.heads`, `q.split`, …) in every run until the
 * returned function is called: the listed heads become 0 ("zero"), or each ablated head's values become their mean
 * over the run's batch ("mean", TransformerLens's mean ablation: what the head gives on average, without what this
 * input adds). Other heads are untouched. Which axis holds the heads comes from the graph (see headsAxis): a value
 * without one ([B, T, E] after the heads are merged) is a GraphValidationError now, as is an unknown mode or a head
 * list that is not integers; a head index outside the value's heads fails the run with an OverrideError naming the node.
 */
export function ablateHeads(
  session: Session,
  node: string,
  heads: readonly number[],
  mode: AblationMode = "zero",
): () => void {
  if (mode !== "zero" && mode !== "mean")
    throw new GraphValidationError("ablateHeads mode", "unknown ablation mode", '"zero" or "mean"', String(mode));
  if (!Array.isArray(heads) || heads.some((h) => !Number.isInteger(h) || h < 0)) {
    throw new GraphValidationError(
      "ablateHeads heads",
      "invalid head list",
      "a list of head indices (integers >= 0)",
      Array.isArray(heads) ? `[${heads.map(String).join(", ")}]` : String(heads),
    );
  }
  const axis = requireHeadsAxis(session.graph, node, `ablateHeads ${node}`);
  const list = [...heads];
  return session.patch(node, (value) => ablated(node, value, list, mode, axis));
}

/** `value` with `heads` (on `axis`) ablated (see ablateHeads). */
export function ablated(
  node: string,
  value: Tensor,
  heads: readonly number[],
  mode: AblationMode,
  axis: number,
): Tensor {
  checkHeads(node, value, heads, axis);
  const data = editable(value);
  for (const h of heads) {
    if (mode === "zero") {
      forHead(value, axis, h, (start, end) => data.fill(0, start, end));
      continue;
    }
    // The mean over the batch of this head's block, element by element.
    const nb = value.shape[0]!;
    const mean = new Float64Array(value.size / (nb * value.shape[axis]!) || 0);
    forHead(value, axis, h, (start, end, _b, k) => {
      for (let i = start; i < end; i++) mean[k + i - start]! += data[i]! / nb;
    });
    forHead(value, axis, h, (start, end, _b, k) => {
      for (let i = start; i < end; i++) data[i] = mean[k + i - start]!;
    });
  }
  return withData(value, data);
}
