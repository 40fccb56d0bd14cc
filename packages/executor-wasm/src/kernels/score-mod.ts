// score-mod, mask-mod and score-mod-input-grad on the wasm executor: the values live in the module's memory, and the
// expression (data: any of them, no kernel per expression) is compiled to JavaScript (compileExpr) and run over that
// memory by @attngraph/graph's host loops (exprRows, inputGradRows), the cpu executor's loops. Views of the memory
// are taken per chunk: an allocation between two chunks (another run's) may grow the memory and detach older views.
import {
  checkExprCached,
  gatheredOfCall,
  inputGradTarget,
  compileExpr,
  exprRows,
  inputGradRows,
  type Expr,
  type F32View,
  type GatheredTensor,
  type ScoreModAttrs,
  type ScoreModInputGradAttrs,
} from "@attngraph/graph";
import { overRows } from "../chunks.js";
import { chunkedKernel } from "../chunks.js";
import type { WasmContext } from "../context.js";
import type { WasmValue } from "../value.js";
import { attrsOf, fillingChunked, optionalInput, requireInput, type Call } from "./adapter.js";

/** Work per element in multiply-adds of the SIMD matmul: an expression evaluated in JavaScript is slow (≈ 64). */
const EXPR_WORK = 64;

/** `v` as a view of the module's memory now (valid until the next allocation). */
export function view(ctx: WasmContext, v: WasmValue): F32View {
  return { data: ctx.f32(), shape: v.shape, strides: v.strides, offset: v.address / 4 };
}

/** The gathered values (slots from `first`, named by attribute `inputs`), with their ranks for the expression's check. */
export function gatheredValues(call: Call, first: number): Map<string, WasmValue> {
  return gatheredOfCall(call, first, (slot, n) => optionalInput(call, slot, n));
}

function exprAttr(call: Call, role: "score" | "mask", gathered: ReadonlyMap<string, WasmValue>): Expr {
  return checkExprCached(call.attrs["expr"], {
    subject: `${call.node}.expr`,
    role,
    inputs: new Map([...gathered].map(([n, v]) => [n, v.rank])),
  });
}

export function views(ctx: WasmContext, gathered: ReadonlyMap<string, WasmValue>): Map<string, GatheredTensor> {
  return new Map([...gathered].map(([n, v]) => [n, view(ctx, v)]));
}

function exprKernel(role: "score" | "mask") {
  return chunkedKernel((call, ctx) => {
    const x = requireInput(call, 0, "x");
    const gathered = gatheredValues(call, 1);
    const expr = exprAttr(call, role, gathered);
    const scale = role === "score" ? attrsOf<ScoreModAttrs>(call).scale : 1;
    const [B, H, L, S] = x.shape as [number, number, number, number];
    const out = ctx.output(call, x.shape);
    return fillingChunked(call, ctx, out, () => {
      if (out.size === 0) return undefined;
      const part = (start: number, end: number) => {
        const f = compileExpr(expr, views(ctx, gathered), `${call.node}.expr`);
        exprRows(view(ctx, x), f, scale, role === "mask", ctx.f32(), out.address / 4, start, end);
      };
      return overRows(call, ctx, B * H * L, S * EXPR_WORK, part);
    });
  });
}

/** Inputs: x [B, H, L, S], gathered g0 …; attrs { scale, expr, inputs } → [B, H, L, S]. */
export const scoreModKernel = exprKernel("score");

/** Inputs: x [B, H, L, S], gathered g0 …; attrs { expr, inputs } → [B, H, L, S], −∞ where expr is false. */
export const maskModKernel = exprKernel("mask");

/** Inputs: x, grad [B, H, L, S], gathered g0 …; attrs { scale, expr, inputs, wrt } → the shape of gathered `wrt`. */
export const scoreModInputGradKernel = chunkedKernel((call, ctx) => {
  const x = requireInput(call, 0, "x");
  const grad = requireInput(call, 1, "grad");
  const gathered = gatheredValues(call, 2);
  const { wrt, target } = inputGradTarget(call, x, grad, gathered);
  const expr = exprAttr(call, "score", gathered);
  const { scale } = attrsOf<ScoreModInputGradAttrs>(call);
  const sums = new Float64Array(target.size);
  const [B, H, L, S] = x.shape as [number, number, number, number];
  const out = ctx.output(call, target.shape);
  return fillingChunked(call, ctx, out, () => {
    const part = (start: number, end: number) =>
      inputGradRows(expr, wrt, views(ctx, gathered), `${call.node}.expr`)(
        view(ctx, x),
        view(ctx, grad),
        scale,
        sums,
        start,
        end,
      );
    const pending = overRows(call, ctx, B * H * L, S * EXPR_WORK, part);
    const store = () => ctx.f32().set(Float32Array.from(sums), out.address / 4);
    if (pending === undefined) return void store();
    return pending.then(store);
  });
});
