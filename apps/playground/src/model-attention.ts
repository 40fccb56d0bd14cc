// One forward run of the whole sequence with every layer's attention pattern tapped: what a click on a token shows.
// The run's own tap (RunOptions.tap) watches only this run, so generation's decoder and later runs read nothing back.
import type { GptModel } from "@attngraph/models";
import type { Tensor } from "@attngraph/tensor";
import { isAttentionNode } from "./attention-rows.js";

/** `transformer.h.<i>.attn.weights` [1, H, T, T] of every layer, for token ids [T] (T ≤ the block size). */
export async function attentionPatterns(model: GptModel, ids: readonly number[]): Promise<Map<string, Tensor>> {
  const tapped = new Map<string, Tensor>();
  await model.run({ idx: [ids] }, { tap: { nodes: isAttentionNode, next: (e) => tapped.set(e.node, e.tensor) } });
  return tapped;
}
