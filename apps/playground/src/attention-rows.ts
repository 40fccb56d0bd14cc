// What the attention grid draws, from the tapped `transformer.h.<i>.attn.weights` [B, H, T, T] of one forward run:
// for the clicked position i, each layer's and head's row i over keys 0..i (a causal model gives the later keys
// nothing). Pure, so it is tested in Node; attention-grid.ts draws it.
import type { Tensor } from "@attngraph/tensor";

/** The nodes holding each layer's attention pattern, `transformer.h.<layer>.attn.weights`. */
const ATTENTION_NODE = /^transformer\.h\.(\d+)\.attn\.weights$/;

export function isAttentionNode(node: string): boolean {
  return ATTENTION_NODE.test(node);
}

export interface AttentionRows {
  /** The query position, within the run's sequence. */
  readonly position: number;
  /** [layer][head][j] for keys j = 0..position. */
  readonly layers: readonly (readonly Float32Array[])[];
}

/** An attention pattern that cannot be read at the clicked position. */
export class AttentionRowsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AttentionRowsError";
  }
}

/** Row `position` of every layer's and head's pattern (batch row 0), layers in order; every layer must be there. */
export function attentionRows(tapped: ReadonlyMap<string, Tensor>, position: number): AttentionRows {
  const byLayer = new Map<number, Tensor>();
  for (const [node, t] of tapped) {
    const m = ATTENTION_NODE.exec(node);
    if (m) byLayer.set(Number(m[1]), t);
  }
  if (byLayer.size === 0) throw new AttentionRowsError("no transformer.h.<i>.attn.weights node was tapped");
  const layers = [...byLayer.keys()].sort((a, b) => a - b);
  return {
    position,
    layers: layers.map((layer, k) => {
      if (layer !== k)
        throw new AttentionRowsError(
          `transformer.h.${k}.attn.weights: missing from the tapped nodes (layers ${layers.join(", ")} came)`,
        );
      const t = byLayer.get(layer)!;
      const [, H, L, S] = t.shape as [number, number, number, number];
      if (t.shape.length !== 4 || L !== S)
        throw new AttentionRowsError(
          `transformer.h.${layer}.attn.weights: expected [B, H, T, T], got [${t.shape.join(", ")}]`,
        );
      if (!Number.isInteger(position) || position < 0 || position >= L)
        throw new AttentionRowsError(`position: expected an integer in [0, ${L}) (the run's T), got ${position}`);
      const w = t.toFloat32Array();
      return Array.from({ length: H }, (_, h) =>
        w.slice((h * L + position) * S, (h * L + position) * S + position + 1),
      );
    }),
  };
}

/**
 * The tokens a forward run can see: the last `blockSize` of the sequence (as nanoGPT crops idx[:, -block_size:]).
 * `start` is the first one's index in the sequence.
 */
export function contextWindow(length: number, blockSize: number): { start: number; length: number } {
  const n = Math.min(length, blockSize);
  return { start: length - n, length: n };
}

/**
 * Pixels per cell of one head's row in the grid: heads side by side must fit the page, so smaller than a heatmap's.
 * (Here, not in attention-grid.ts, so Node tests need no DOM module.)
 */
export function rowCellSize(cols: number): number {
  return Math.max(3, Math.min(22, Math.floor(240 / cols)));
}
