import { formatDims } from "../dims.js";
import { defineOp } from "../op-def.js";
import { expectDim } from "./shape-checks.js";

export interface EmbeddingGradAttrs {
  /** V, the table's row count. */
  readonly rows: number;
}

/**
 * The table gradient of an embedding: a scatter-add, out[ids[p], :] += grad[p, :] over every position p; rows no id
 * names are 0. An id outside [0, V) is an error naming the node, the position and the id.
 * ids [...] int32, grad [..., E] → [V, E].
 */
export const embeddingGradOp = defineOp<EmbeddingGradAttrs>({
  kind: "embedding-grad",
  doc: "Embedding backward: scatter-add of grad rows into a zero [V, E] table by int32 id.",
  inputs: [
    { name: "ids", dtype: "int32", doc: "[...] int32 ids in [0, V)" },
    { name: "grad", doc: "[..., E]" },
  ],
  attrs: { rows: { type: "integer", min: 1, max: 2 ** 31 - 1, doc: "V, the table's rows (int32 ids index it)" } },
  inferShape: ([ids, g], { rows }, ctx) => {
    if (g!.length !== ids!.length + 1)
      ctx.fail(
        "grad",
        "grad must be the ids' shape plus the embedding axis",
        `rank ${ids!.length + 1}`,
        formatDims(g!),
      );
    ids!.forEach((d, i) => expectDim(ctx, "grad", `grad dim ${i} must match the ids`, d, g![i]!, g));
    return [rows, g![g!.length - 1]!];
  },
});
