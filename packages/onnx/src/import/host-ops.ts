// Host implementations of the ONNX ops that exporters use for shape arithmetic and constant masks, run at import on
// values that are known: initializers, Constant nodes, Shape of a value whose dims are fixed, and what these compute.
// A folded node leaves no trace in the graph (explain() counts them). Results are bounded (MAX_FOLDED elements) so
// that a ConstantOfShape or Range of absurd size is a typed error, not an out-of-memory.
import { broadcastIndex, broadcastShape } from "./broadcast-host.js";
import { binary, cast, erf, unary } from "./host-elementwise.js";
import {
  axesOf,
  expandTo,
  gather,
  reshapeTarget,
  slice,
  sliceSpec,
  splitSizes,
  squeezeShape,
  transpose,
  unsqueezeShape,
} from "./host-shape-ops.js";
import { formatShape, hostTensor, sizeOf, type HostTensor } from "./host-tensor.js";
import { attrInt, attrInts, bounded, fail, ints, need, normAxis, type HostOp } from "./node-args.js";
import type { NodeIn } from "./read-model.js";

export const HOST_OPS: Readonly<Record<string, HostOp>> = {
  Identity: (n, ins) => [need(n, ins, 0)],
  Add: binary((a, b) => a + b),
  Sub: binary((a, b) => a - b),
  Mul: binary((a, b) => a * b),
  Div: binary((a, b) => a / b),
  Pow: binary((a, b) => a ** b),
  Equal: binary((a, b) => (a === b ? 1 : 0), "bool"),
  Less: binary((a, b) => (a < b ? 1 : 0), "bool"),
  Greater: binary((a, b) => (a > b ? 1 : 0), "bool"),
  And: binary((a, b) => (a && b ? 1 : 0), "bool"),
  Or: binary((a, b) => (a || b ? 1 : 0), "bool"),
  Max: binary((a, b) => Math.max(a, b)),
  Min: binary((a, b) => Math.min(a, b)),
  LessOrEqual: binary((a, b) => (a <= b ? 1 : 0), "bool"),
  GreaterOrEqual: binary((a, b) => (a >= b ? 1 : 0), "bool"),
  Xor: binary((a, b) => ((a !== 0) !== (b !== 0) ? 1 : 0), "bool"),
  // fmod 0 (integers): the result takes the divisor's sign; fmod 1: C's fmod, the dividend's sign.
  Mod: (n, ins) =>
    binary(attrInt(n, "fmod", 0) === 1 ? (a, b) => a % b : (a, b) => a - b * Math.floor(a / b))(n, ins, 0),
  Not: unary((a) => (a ? 0 : 1)),
  IsInf: (n, ins) => {
    const x = need(n, ins, 0);
    const neg = attrInt(n, "detect_negative", 1) === 1;
    const pos = attrInt(n, "detect_positive", 1) === 1;
    return [
      hostTensor(
        "bool",
        x.shape,
        Array.from(x.data, (v) => ((v === -Infinity && neg) || (v === Infinity && pos) ? 1 : 0)),
      ),
    ];
  },
  Abs: unary(Math.abs),
  Floor: unary(Math.floor),
  Ceil: unary(Math.ceil),
  Log: unary(Math.log),
  Clip: (n, ins) => {
    const x = need(n, ins, 0);
    const lo = ins[1]?.data[0] ?? -Infinity;
    const hi = ins[2]?.data[0] ?? Infinity;
    return unary((v) => Math.min(Math.max(v, lo), hi))(n, [x], 0);
  },
  Neg: unary((a) => -a),
  Sqrt: unary(Math.sqrt),
  Reciprocal: unary((a) => 1 / a),
  Erf: unary(erf),
  Tanh: unary(Math.tanh),
  Exp: unary(Math.exp),
  Sigmoid: unary((a) => 1 / (1 + Math.exp(-a))),
  Cast: (n, ins) => [cast(n, need(n, ins, 0))],
  Gather: (n, ins) => [gather(n, need(n, ins, 0), need(n, ins, 1), attrInt(n, "axis", 0))],
  Transpose: (n, ins) => {
    const x = need(n, ins, 0);
    return [transpose(n, x, attrInts(n, "perm") ?? x.shape.map((_, i) => x.shape.length - 1 - i))];
  },
  Reshape: (n, ins) => {
    const x = need(n, ins, 0);
    return [{ ...x, shape: reshapeTarget(n, x.shape, ints(need(n, ins, 1)), attrInt(n, "allowzero", 0) === 1) }];
  },
  Unsqueeze: (n, ins) => {
    const x = need(n, ins, 0);
    const axes = axesOf(n, ins);
    if (!axes) fail(n, "Unsqueeze without axes", "an axes input or attribute", "none");
    return [{ ...x, shape: unsqueezeShape(n, x.shape, axes) }];
  },
  Squeeze: (n, ins) => {
    const x = need(n, ins, 0);
    return [{ ...x, shape: squeezeShape(n, x.shape, axesOf(n, ins)) }];
  },
  Concat: (n, ins) => {
    const parts = ins.filter((t): t is HostTensor => t !== undefined);
    if (parts.length === 0) fail(n, "Concat of nothing", "at least one input", "none");
    const rank = parts[0]!.shape.length;
    const axis = normAxis(n, attrInt(n, "axis"), rank);
    for (const p of parts)
      if (p.shape.length !== rank || p.shape.some((d, i) => i !== axis && d !== parts[0]!.shape[i]))
        fail(n, "inputs differ outside the axis", formatShape(parts[0]!.shape), formatShape(p.shape));
    const shape = [...parts[0]!.shape];
    shape[axis] = parts.reduce((a, p) => a + p.shape[axis]!, 0);
    const total = bounded(n, shape);
    const outer = sizeOf(shape.slice(0, axis));
    const out = parts[0]!.data instanceof Float32Array ? new Float32Array(total) : new Float64Array(total);
    let at = 0;
    for (let o = 0; o < outer; o++) {
      for (const p of parts) {
        const chunk = sizeOf(p.shape.slice(axis));
        out.set(p.data.subarray(o * chunk, (o + 1) * chunk), at);
        at += chunk;
      }
    }
    return [{ dtype: parts[0]!.dtype, shape, data: out }];
  },
  Slice: (n, ins) => {
    const x = need(n, ins, 0);
    const spec = sliceSpec(
      n,
      x.shape,
      ints(need(n, ins, 1)),
      ints(need(n, ins, 2)),
      ins[3] && ints(ins[3]),
      ins[4] && ints(ins[4]),
    );
    return [slice(n, x, spec)];
  },
  Split: (n, ins) => {
    const x = need(n, ins, 0);
    const axis = normAxis(n, attrInt(n, "axis", 0), x.shape.length);
    const sizes = splitSizes(n, x.shape[axis]!, ins[1] ? ints(ins[1]) : attrInts(n, "split"), n.outputs.length);
    let start = 0;
    return sizes.map((size) => {
      const spec = x.shape.map((d, i) =>
        i === axis ? { start, step: 1, count: size } : { start: 0, step: 1, count: d },
      );
      start += size;
      return slice(n, x, spec);
    });
  },
  Where: (n, ins) => {
    const c = need(n, ins, 0);
    const a = need(n, ins, 1);
    const b = need(n, ins, 2);
    const shape = broadcastShape(broadcastShape(c.shape, a.shape, n.name), b.shape, n.name);
    const count = bounded(n, shape);
    const [ic, ia, ib] = [
      broadcastIndex(c.shape, shape),
      broadcastIndex(a.shape, shape),
      broadcastIndex(b.shape, shape),
    ];
    const out = a.data instanceof Float32Array ? new Float32Array(count) : new Float64Array(count);
    for (let i = 0; i < count; i++) out[i] = c.data[ic[i]!] ? a.data[ia[i]!]! : b.data[ib[i]!]!;
    return [{ dtype: a.dtype, shape, data: out }];
  },
  Range: (n, ins) => {
    const [s, l, d] = [0, 1, 2].map((i) => scalar(n, need(n, ins, i), i));
    if (d === 0) fail(n, "Range with delta 0", "a non-zero delta", "0");
    const count = Math.max(Math.ceil((l! - s!) / d!), 0);
    bounded(n, [count]);
    return [
      hostTensor(
        need(n, ins, 0).dtype,
        [count],
        Array.from({ length: count }, (_, i) => s! + i * d!),
      ),
    ];
  },
  ConstantOfShape: (n, ins) => {
    const shape = ints(need(n, ins, 0));
    const count = bounded(n, shape);
    const value = n.attrs.get("value")?.t;
    const v = value?.data[0] ?? 0;
    return [hostTensor(value?.dtype ?? "float32", shape, new Float64Array(count).fill(v))];
  },
  Expand: (n, ins) => {
    const x = need(n, ins, 0);
    const target = ints(need(n, ins, 1));
    return [expandTo(n, x, broadcastShape(x.shape, target, `node ${n.name} (Expand)`))];
  },
  Trilu: (n, ins) => {
    const x = need(n, ins, 0);
    const k = ins[1] ? scalar(n, ins[1], 1) : 0;
    const upper = attrInt(n, "upper", 1) === 1;
    if (x.shape.length < 2) fail(n, "Trilu needs a matrix", "rank >= 2", formatShape(x.shape));
    const [r, c] = x.shape.slice(-2) as [number, number];
    const out = x.data.slice();
    for (let i = 0; i < out.length; i++) {
      const col = i % c;
      const row = Math.floor(i / c) % r;
      if (upper ? col - row < k : col - row > k) out[i] = 0;
    }
    return [{ dtype: x.dtype, shape: x.shape, data: out }];
  },
};

function scalar(node: NodeIn, t: HostTensor, i: number): number {
  if (t.data.length !== 1) fail(node, `input ${i} must be a scalar`, "one value", formatShape(t.shape));
  return t.data[0]!;
}
