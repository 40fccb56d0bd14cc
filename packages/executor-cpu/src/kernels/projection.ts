// projection: y = x · Wᵀ + b over the last axis (nn.Linear layout). out-proj reuses this file's Impl and adapter.
import { ShapeError, Tensor, formatShape } from "@attngraph/tensor";
import type { CpuKernel } from "../executor.js";
import { expectDim, expectRank, optionalInput, requireInput } from "./adapter.js";
import { lastAxis, rowOffsets, type StridedView } from "./strided.js";

/**
 * y = x · Wᵀ + b, accumulated in float64 (JS numbers) and stored as float32. Reads every input through its strides,
 * so a transposed or sliced x (e.g. one third of a fused QKV projection) or a transposed weight needs no copy.
 * Shapes are not checked here (the adapter does).
 * @param x [..., In], any strides
 * @param weight [Out, In], any strides
 * @param bias [Out], or undefined
 * @returns [..., Out], row-major
 */
export function projectionImpl(x: StridedView, weight: StridedView, bias: StridedView | undefined): Float32Array {
  const rows = rowOffsets(x);
  const { length: nIn, stride: xs } = lastAxis(x);
  const nOut = weight.shape[0]!;
  const ws0 = weight.strides[0]!;
  const ws1 = weight.strides[1]!;
  const xd = x.data;
  const wd = weight.data;
  const bd = bias?.data;
  const bo = bias?.offset ?? 0;
  const bs = bias?.strides[0] ?? 0;
  const out = new Float32Array(rows.length * nOut);
  for (let r = 0; r < rows.length; r++) {
    const xb = rows[r]!;
    const ob = r * nOut;
    for (let o = 0; o < nOut; o++) {
      let acc = 0;
      for (let i = 0, xp = xb, wp = weight.offset + o * ws0; i < nIn; i++, xp += xs, wp += ws1) acc += xd[xp]! * wd[wp]!;
      if (bd !== undefined) acc += bd[bo + o * bs]!;
      out[ob + o] = acc;
    }
  }
  return out;
}

/** Inputs: x [..., In], weight [Out, In], optional bias [Out] → [..., Out]. Also serves out-proj. */
export const projectionKernel: CpuKernel = (call) => {
  const x = requireInput(call, 0, "x");
  const w = requireInput(call, 1, "weight");
  const b = optionalInput(call, 2, "bias");
  if (x.rank < 1) throw new ShapeError(`${call.node}.x`, `op ${call.kind} needs at least one axis`, "[..., In]", formatShape(x.shape));
  expectRank(call, "weight", w, 2, "[Out, In]");
  const nIn = x.shape[x.rank - 1]!;
  const nOut = w.shape[0]!;
  expectDim(call, "weight", "weight columns must equal the input's last dim In", nIn, w.shape[1]!, w);
  if (b !== undefined) {
    expectRank(call, "bias", b, 1, "[Out]");
    expectDim(call, "bias", "bias length must equal the weight's rows Out", nOut, b.shape[0]!, b);
  }
  return new Tensor(projectionImpl(x, w, b), [...x.shape.slice(0, -1), nOut]);
};
