// position-embedding: rows offset..offset+T-1 of a learned [P, E] position table (GPT-2's wpe), T the ids' last dim;
// the ids are read for their shape only. The rows are one contiguous range of the table, so this is the module's
// strided copy (assembly/copy) of a view of the weight: no kernel of its own. The shape rule checked the bound offset
// against P, so a view past the table is never even made.
import type { WasmKernel } from "../executor.js";
import { attrsOf, filling, requireInput } from "./adapter.js";

/** Inputs: ids [..., T] int32 (shape only), weight [P, E]; attrs { offset (bound) } → [T, E]. */
export const positionEmbeddingKernel: WasmKernel = (call, ctx) => {
  const ids = requireInput(call, 0, "ids");
  const w = requireInput(call, 1, "weight");
  const ne = w.shape[1]!;
  const nt = ids.shape[ids.rank - 1]!;
  const offset = attrsOf<{ offset: number }>(call).offset; // bound and in range: checkCall
  const out = ctx.output(call, [nt, ne]);
  return filling(call, ctx, out, () => {
    if (out.size === 0) return;
    // A view holds a reference to the weight's block: given back once copied.
    const rows = ctx.view(w, [nt, ne], w.strides, w.offset + offset * w.strides[0]!);
    try {
      ctx.copy(rows, out);
    } finally {
      ctx.release(rows);
    }
  });
};
