// score-mod and mask-mod: the unfused forms of a score and a mask modification (what a tap on `scores`/`masked`
// shows), one expression evaluated per element of [B, H, L, S], compiled once per plan step (compileExpr). The loop
// is @attngraph/graph's (exprRows), shared with the wasm executor.
import { afterwards, compileExpr, exprRows, overRows, type ScoreModAttrs } from "@attngraph/graph";
import { DEFAULT_CHUNK_WORK, chunkedKernel } from "../chunks.js";
import { outData, requireInput, result, type Call, attrsOf } from "./adapter.js";
import { exprOf, gatheredOf } from "./gathered.js";

/** Work per element in multiply-adds of the matmul core: an expression of a few operations and a strided read (≈ 8). */
const EXPR_WORK = 8;

function exprKernel(role: "score" | "mask") {
  return chunkedKernel((call: Call, chunkWork = DEFAULT_CHUNK_WORK) => {
    const x = requireInput(call, 0, "x");
    const gathered = gatheredOf(call, 1);
    const expr = exprOf(call, "expr", role, gathered);
    const scale = role === "score" ? attrsOf<ScoreModAttrs>(call).scale : 1;
    const f = compileExpr(expr, gathered, `${call.node}.expr`);
    const [B, H, L, S] = x.shape as [number, number, number, number];
    const y = outData(call, x.shape) ?? new Float32Array(B * H * L * S);
    const pending = overRows(call, chunkWork, B * H * L, S * EXPR_WORK, (start, end) =>
      exprRows(x, f, scale, role === "mask", y, 0, start, end),
    );
    return afterwards(pending, () => result(call, y, x.shape));
  });
}

/** Inputs: x [B, H, L, S], gathered g0 …; attrs { scale, expr, inputs } → [B, H, L, S]. */
export const scoreModKernel = exprKernel("score");

/** Inputs: x [B, H, L, S], gathered g0 …; attrs { expr, inputs } → [B, H, L, S], −∞ where expr is false. */
export const maskModKernel = exprKernel("mask");
