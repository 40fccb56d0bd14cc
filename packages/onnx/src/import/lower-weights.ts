// Constant weights as the lowering hands them to attngraph ops: ONNX's [in, out] right-hand sides as [out, in]
// projection weights (under the file's own names where it can), scaled copies, and constants read as bias vectors.
import type { HostTensor } from "./host-tensor.js";
import type { LowerContext } from "./lower-context.js";
import { attrInts } from "./node-args.js";

/** `t` as a [out, in] weight for a projection, from ONNX's [in, out] MatMul right-hand side (scaled by `alpha`). */
export function transposed(t: HostTensor, alpha = 1): HostTensor {
  const [rows, cols] = t.shape as [number, number];
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = t.data[r * cols + c]! * alpha;
  return { dtype: "float32", shape: [cols, rows], data: out };
}

export function scaled(t: HostTensor, k: number): HostTensor {
  return { dtype: t.dtype, shape: t.shape, data: t.data.map((v) => v * k) as typeof t.data };
}

/**
 * The [out, in] weight of x · W for W the static value `w` ([in, out]): an initializer that a Transpose made `w` from
 * (nn.Linear's layout, as exportOnnx and some exporters write it) is used as it is, under its own name, so that the
 * imported graph's weights keep the file's names; any other `w` is transposed into `<w>.T`.
 */
export function projectionWeight(ctx: LowerContext, w: string, t: HostTensor, alpha = 1): string {
  const p = ctx.index.producer.get(w);
  const perm = p && attrInts(p, "perm");
  const source =
    p?.opType === "Transpose" && (perm === undefined || perm.join() === "1,0")
      ? ctx.index.model.initializers.get(p.inputs[0] ?? "")
      : undefined;
  if (source && alpha === 1) return ctx.weight(p!.inputs[0]!, source);
  return ctx.weight(`${w}.T`, transposed(t, alpha));
}

/** A constant's values as a vector along the last axis (leading dims all 1), or undefined. */
export function asVector(t: HostTensor | undefined): HostTensor | undefined {
  if (!t || t.shape.length === 0 || t.shape.slice(0, -1).some((d) => d !== 1)) return undefined;
  return { dtype: t.dtype, shape: [t.shape[t.shape.length - 1]!], data: t.data };
}
