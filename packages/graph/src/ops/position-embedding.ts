import { formatDims } from "../dims.js";
import { defineOp } from "../op-def.js";
import { gradOf } from "../vjp-helpers.js";

export interface PositionEmbeddingAttrs {
  /**
   * The position of token 0 (tokens already decoded). A dim name (a decode graph's `N`, DECODE_DIMS.position) is bound
   * per run; kernels get the integer.
   */
  readonly offset: number | string;
}

/**
 * Learned absolute positions read from the graph (GPT-2's `wpe`): out[t, :] = weight[offset + t, :] for t < T, where T
 * is the last dim of `ids`. Only the ids' shape is read, never their values, so a caller feeds no position ids; the
 * result broadcasts over the batch when added to token embeddings [B, T, E]. Positions past the table (offset + T > P,
 * the block size) are an error naming the node, at build time when the dims are known and in every kernel otherwise.
 * ids [..., T] int32, weight [P, E] → [T, E].
 */
export const positionEmbeddingOp = defineOp<PositionEmbeddingAttrs>({
  kind: "position-embedding",
  doc: "Rows offset..offset+T-1 of a learned [P, E] position table (GPT-2 wpe), T the ids' last dim; only their shape is read.",
  inputs: [
    { name: "ids", dtype: "int32", doc: "[..., T] int32 token ids; only the shape is read (T = the last dim)" },
    { name: "weight", rank: 2, doc: "[P, E]" },
  ],
  attrs: {
    offset: {
      type: "dim",
      default: 0,
      min: 0,
      doc: "position of token 0: an integer >= 0, or a dim name bound per run (a decode graph's N)",
    },
  },
  inferShape: ([ids, w], { offset }, ctx) => {
    if (ids!.length < 1)
      ctx.fail("ids", "position-embedding reads T from the ids' last dim", "[..., T] (rank >= 1)", formatDims(ids!));
    const t = ids![ids!.length - 1]!;
    const p = w![0]!;
    // Symbolic dims pass here; the runtime re-runs this rule with the run's dims bound, and the kernels check too.
    if (typeof t === "number" && typeof p === "number" && typeof offset === "number" && offset + t > p) {
      ctx.fail(
        "offset",
        `positions ${offset}..${offset + t - 1} run past the table's P rows (the block size)`,
        `offset + T <= P = ${p}`,
        `${offset} + ${t} = ${offset + t}`,
      );
    }
    return [t, w![1]!];
  },
  // The ids are read for their shape only (no gradient); the table's gradient is the output's, put in its rows.
  vjp: (ctx) => {
    const w = ctx.inputs[1]!;
    const rows = ctx.shapeOf(w)[0]!;
    if (typeof rows !== "number")
      ctx.unsupported(`the gradient of a position table with a symbolic row count (${rows})`);
    const grad = gradOf(ctx, "position-embedding");
    return [
      undefined,
      ctx.needs(1)
        ? ctx.addGrad(1, "position-embedding-grad", { grad }, { rows, offset: ctx.attrs.offset })
        : undefined,
    ];
  },
});
