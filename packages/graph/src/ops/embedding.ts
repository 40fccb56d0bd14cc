import { defineOp } from "../op-def.js";
import { gradOf } from "../vjp-helpers.js";

export interface EmbeddingAttrs {}

/**
 * Rows of a table by integer id, PyTorch `nn.Embedding`: out[..., :] = weight[ids[...], :]. ids are int32; an id
 * outside [0, V) is an error naming the node, the position and the id (never a silent read of other memory).
 * ids [...] (int32), weight [V, E] → [..., E].
 */
export const embeddingOp = defineOp<EmbeddingAttrs>({
  kind: "embedding",
  doc: "Rows of a [V, E] table by int32 id (nn.Embedding); an id outside [0, V) is an error naming its position.",
  inputs: [
    { name: "ids", dtype: "int32", doc: "[...] int32 token ids in [0, V)" },
    { name: "weight", rank: 2, doc: "[V, E]" },
  ],
  attrs: {},
  inferShape: ([ids, w]) => [...ids!, w![1]!],
  // ids are integers (no gradient); the table's gradient is a scatter-add of the rows' gradients.
  vjp: (ctx) => {
    const [ids, w] = ctx.inputs as [string, string];
    const rows = ctx.shapeOf(w)[0]!;
    if (typeof rows !== "number")
      ctx.unsupported(`the gradient of an embedding table with a symbolic row count (${rows})`);
    return [
      undefined,
      ctx.needs(1) ? ctx.addGrad(1, "embedding-grad", { ids, grad: gradOf(ctx, "embedding") }, { rows }) : undefined,
    ];
  },
});
