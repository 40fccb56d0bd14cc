// position-embedding-grad: grad [T, E] written at rows offset..offset+T-1 of a zero [P, E]. The rows are distinct (no
// scatter-add as in embedding-grad), so this is pad along the rows: the module's pad (assembly/sum-to.ts `pad`), with
// offset·E zeros ahead and (P − offset − T)·E behind. The shape rule checked the bound offset against P.
import type { PositionEmbeddingGradAttrs } from "@attngraph/graph";
import type { WasmKernel } from "../executor.js";
import { attrsOf, filling, requireInput } from "./adapter.js";

/** Input: grad [T, E]; attrs { rows: P, offset (bound) } → [P, E]. */
export const positionEmbeddingGradKernel: WasmKernel = (call, ctx) => {
  const g = requireInput(call, 0, "grad");
  const np = attrsOf<PositionEmbeddingGradAttrs>(call).rows;
  const [nt, ne] = g.shape as [number, number];
  const offset = attrsOf<{ offset: number }>(call).offset; // bound and in range: checkCall
  const out = ctx.output(call, [np, ne]);
  return filling(call, ctx, out, () => {
    if (out.size === 0) return;
    if (g.size === 0) ctx.exports.zero(out.address, out.size * 4);
    else ctx.exports.pad(g.address, ctx.desc(g), out.address, nt, offset * ne, (np - offset - nt) * ne);
  });
};
