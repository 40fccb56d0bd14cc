import { formatDims } from "../dims.js";
import { defineOp } from "../op-def.js";

export interface PositionEmbeddingGradAttrs {
  /** P, the table's row count. */
  readonly rows: number;
  /** The forward's offset: an integer, or a dim name bound per run. */
  readonly offset: number | string;
}

/**
 * The table gradient of a position-embedding: out[offset + t, :] = grad[t, :], every other row 0. Unlike
 * embedding-grad there is no scatter-add: the rows are distinct. Rows past P are an error naming the node.
 * grad [T, E] → [P, E].
 */
export const positionEmbeddingGradOp = defineOp<PositionEmbeddingGradAttrs>({
  kind: "position-embedding-grad",
  doc: "Position-embedding backward: grad [T, E] placed at rows offset..offset+T-1 of a zero [P, E] table.",
  inputs: [{ name: "grad", rank: 2, doc: "[T, E]" }],
  attrs: {
    rows: { type: "integer", min: 1, max: 2 ** 31 - 1, doc: "P, the table's rows" },
    offset: {
      type: "dim",
      default: 0,
      min: 0,
      doc: "the forward's offset: an integer >= 0, or a dim name bound per run",
    },
  },
  inferShape: ([g], { rows, offset }, ctx) => {
    const t = g![0]!;
    if (typeof t === "number" && typeof offset === "number" && offset + t > rows) {
      ctx.fail(
        "offset",
        `positions ${offset}..${offset + t - 1} run past the table's P rows (the block size)`,
        `offset + T <= P = ${rows}`,
        `${offset} + ${t} = ${offset + t} for grad ${formatDims(g!)}`,
      );
    }
    return [rows, g![1]!];
  },
});
