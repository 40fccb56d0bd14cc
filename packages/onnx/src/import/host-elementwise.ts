// The elementwise host ops: broadcast binary ops, unary maps, Cast, and an erf exact enough for folding.
import { broadcastIndex, broadcastShape } from "./broadcast-host.js";
import { ONNX_ELEM, hostTensor, isFloat, type ElemType, type HostTensor } from "./host-tensor.js";
import { attrInt, bounded, fail, need, type HostOp } from "./node-args.js";
import type { NodeIn } from "./read-model.js";

export function binary(f: (a: number, b: number) => number, outType?: ElemType): HostOp {
  return (node, ins) => {
    const a = need(node, ins, 0);
    const b = need(node, ins, 1);
    const shape = broadcastShape(a.shape, b.shape, `node ${node.name} (${node.opType})`);
    const n = bounded(node, shape);
    const ia = broadcastIndex(a.shape, shape);
    const ib = broadcastIndex(b.shape, shape);
    const dtype = outType ?? a.dtype;
    const out = isFloat(dtype) && dtype !== "float64" ? new Float32Array(n) : new Float64Array(n);
    const ints = !isFloat(dtype);
    for (let i = 0; i < n; i++) {
      const v = f(a.data[ia[i]!]!, b.data[ib[i]!]!);
      out[i] = ints ? Math.trunc(v) : v;
    }
    return [{ dtype, shape, data: out }];
  };
}

export function unary(f: (a: number) => number): HostOp {
  return (node, ins) => {
    const a = need(node, ins, 0);
    const out = a.data instanceof Float32Array ? new Float32Array(a.data.length) : new Float64Array(a.data.length);
    for (let i = 0; i < out.length; i++) out[i] = f(a.data[i]!);
    return [{ dtype: a.dtype, shape: a.shape, data: out }];
  };
}

export function cast(node: NodeIn, x: HostTensor): HostTensor {
  const to = ONNX_ELEM[attrInt(node, "to")];
  if (!to)
    fail(node, "Cast to a type the importer does not hold", "a float, int or bool type", String(attrInt(node, "to")));
  const f =
    to === "bool" ? (v: number) => (v !== 0 ? 1 : 0) : isFloat(to) ? (v: number) => v : (v: number) => Math.trunc(v);
  return hostTensor(to, x.shape, Array.from(x.data, f));
}

export function erf(x: number): number {
  // Abramowitz–Stegun 7.1.26 is too coarse for folding; a series / continued fraction pair is exact to ~1e-15.
  const ax = Math.abs(x);
  if (ax < 2.5) {
    let sum = x;
    let term = x;
    for (let n = 1; n < 60; n++) {
      term *= (-x * x) / n;
      sum += term / (2 * n + 1);
    }
    return (2 / Math.sqrt(Math.PI)) * sum;
  }
  let t = 0;
  for (let n = 60; n >= 1; n--) t = n / 2 / (ax + t);
  const erfc = Math.exp(-ax * ax) / Math.sqrt(Math.PI) / (ax + t);
  return Math.sign(x) * (1 - erfc);
}
