// The gradient of a score-mod's gathered input (a learnable bias table, per-head temperatures): for every element and
// every read of that input, grad · d expr / d read, added at the index the read took. Sums in float64; the loop is
// @attngraph/graph's (inputGradRows), shared with the wasm executor.
import { afterwards, inputGradRows, inputGradTarget, overRows, type ScoreModInputGradAttrs } from "@attngraph/graph";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { outData, requireInput, result, type Call, attrsOf } from "./adapter.js";
import { exprOf, gatheredOf } from "./gathered.js";

/** Per element and read: the derivative, its indices and a scattered add (≈ 16 multiply-adds). */
const READ_WORK = 16;

/** Inputs: x, grad [B, H, L, S], gathered g0 …; attrs { scale, expr, inputs, wrt } → the shape of gathered `wrt`. */
export const scoreModInputGradKernel = chunkedKernel((call: Call, chunkWork = DEFAULT_CHUNK_WORK) => {
  const x = requireInput(call, 0, "x");
  const grad = requireInput(call, 1, "grad");
  const gathered = gatheredOf(call, 2);
  const { wrt, target } = inputGradTarget(call, x, grad, gathered);
  const expr = exprOf(call, "expr", "score", gathered);
  const { scale } = attrsOf<ScoreModInputGradAttrs>(call);
  const rows = inputGradRows(expr, wrt, gathered, `${call.node}.expr`);
  const sums = new Float64Array(target.shape.reduce((a, n) => a * n, 1));
  const [B, H, L, S] = x.shape as [number, number, number, number];
  const pending = overRows(call, chunkWork, B * H * L, S * READ_WORK, (start, end) =>
    rows(x, grad, scale, sums, start, end),
  );
  return afterwards(pending, () => {
    const y = outData(call, target.shape) ?? new Float32Array(sums.length);
    for (let i = 0; i < sums.length; i++) y[i] = sums[i]!;
    return result(call, y, target.shape);
  });
});
