// Lowering of ONNX's matrix products: MatMul (x · constant as a projection, rank-4 runtime products as weighted-sum)
// and Gemm (x · constant weight + constant bias).
import { formatShape, isFloat } from "./host-tensor.js";
import type { LowerContext } from "./lower-context.js";
import { asVector, projectionWeight, scaled, transposed } from "./lower-weights.js";
import { attrFloat, attrInt } from "./node-args.js";
import type { NodeIn } from "./read-model.js";

export function matMul(ctx: LowerContext, n: NodeIn): void {
  const [a, b] = n.inputs as [string, string];
  const va = ctx.val(a, n);
  const wb = ctx.constOf(b);
  if (va.kind === "node" && wb && wb.shape.length === 2 && isFloat(wb.dtype)) {
    ctx.addOutput(n, "projection", { x: va.ref, weight: projectionWeight(ctx, b, wb) }, {}, [n]);
    return;
  }
  const vb = ctx.val(b, n);
  const sa = ctx.shapeOf(a, n);
  const sb = ctx.shapeOf(b, n);
  if (va.kind === "node" && vb.kind === "node" && sa.length === 4 && sb.length === 4) {
    // A batched product of two runtime values [B, H, L, K] · [B, Hkv, K, N] is what weighted-sum computes.
    ctx.addOutput(n, "weighted-sum", { weights: va.ref, v: vb.ref }, {}, [n], "a batched MatMul");
    return;
  }
  ctx.unsupported(
    n,
    `MatMul of ${va.kind === "node" ? "a runtime" : "a constant"} ${formatShape(sa)} by ${vb.kind === "node" ? "a runtime" : "a constant"} ${formatShape(sb)} (built: x · constant [in, out], and rank-4 batched products)`,
  );
}

export function gemm(ctx: LowerContext, n: NodeIn): void {
  const w = ctx.constOf(n.inputs[1]);
  const bias = n.inputs[2] ? ctx.constOf(n.inputs[2]) : undefined;
  if (!w || attrInt(n, "transA", 0) !== 0 || (n.inputs[2] && !bias))
    ctx.unsupported(n, "Gemm other than x · constant weight (+ constant bias), transA 0");
  const alpha = attrFloat(n, "alpha", 1);
  const beta = attrFloat(n, "beta", 1);
  // transB 1 is nn.Linear's [out, in] already.
  const weight = attrInt(n, "transB", 0) === 1 ? scaled(w, alpha) : transposed(w, alpha);
  const vec = bias && asVector(bias);
  if (bias && (!vec || vec.shape[0] !== weight.shape[0]))
    ctx.unsupported(n, "Gemm whose C is not one bias per output", formatShape(bias.shape));
  const inputs = {
    x: ctx.ref(n.inputs[0]!, n),
    weight: ctx.weight(`${n.inputs[1]}.gemm`, weight),
    bias: vec ? ctx.weight(`${n.inputs[2]}.gemm`, scaled(vec, beta)) : undefined,
  };
  ctx.addOutput(n, "projection", inputs, {}, [n]);
}
