// Host implementations of the ONNX ops that exporters use for shape arithmetic and constant masks, run at import on
// values that are known: initializers, Constant nodes, Shape of a value whose dims are fixed, and what these compute.
// A folded node leaves no trace in the graph (explain() counts them). Results are bounded (MAX_FOLDED elements) so
// that a ConstantOfShape or Range of absurd size is a typed error, not an out-of-memory.
import { nodeError } from "./import-error.js";
import { broadcastIndex, broadcastShape } from "./broadcast-host.js";
import {
  ONNX_ELEM,
  formatShape,
  hostTensor,
  isFloat,
  sizeOf,
  stridesOf,
  type ElemType,
  type HostTensor,
} from "./host-tensor.js";
import type { NodeIn } from "./read-model.js";

export const MAX_FOLDED = 2 ** 26;

export type HostOp = (node: NodeIn, ins: readonly (HostTensor | undefined)[], opset: number) => HostTensor[];

function fail(node: NodeIn, what: string, expected: string, got: string): never {
  throw nodeError(node, what, expected, got);
}

export function need(node: NodeIn, ins: readonly (HostTensor | undefined)[], i: number): HostTensor {
  const t = ins[i];
  if (!t) fail(node, `input ${i} is missing`, "an input", "none");
  return t;
}

function bounded(node: NodeIn, shape: readonly number[]): number {
  for (const d of shape)
    if (!Number.isSafeInteger(d) || d < 0)
      fail(node, "a result dim is not a whole number >= 0", "dims >= 0", formatShape(shape));
  const n = sizeOf(shape);
  if (n > MAX_FOLDED)
    fail(
      node,
      "folding this node at import would make too large a tensor",
      `at most ${MAX_FOLDED} elements`,
      formatShape(shape),
    );
  return n;
}

export function attrInt(node: NodeIn, name: string, fallback?: number): number {
  const a = node.attrs.get(name);
  if (a?.i !== undefined) return a.i;
  if (fallback === undefined) fail(node, `attribute ${name} is missing`, "an integer", "none");
  return fallback;
}

export function attrInts(node: NodeIn, name: string): readonly number[] | undefined {
  return node.attrs.get(name)?.ints;
}

export function attrFloat(node: NodeIn, name: string, fallback: number): number {
  return node.attrs.get(name)?.f ?? fallback;
}

export function normAxis(node: NodeIn, axis: number, rank: number): number {
  const a = axis < 0 ? axis + rank : axis;
  if (!Number.isInteger(a) || a < 0 || a >= rank)
    fail(node, "axis out of range", `-${rank} … ${rank - 1}`, String(axis));
  return a;
}

function binary(f: (a: number, b: number) => number, outType?: ElemType): HostOp {
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

function unary(f: (a: number) => number): HostOp {
  return (node, ins) => {
    const a = need(node, ins, 0);
    const out = a.data instanceof Float32Array ? new Float32Array(a.data.length) : new Float64Array(a.data.length);
    for (let i = 0; i < out.length; i++) out[i] = f(a.data[i]!);
    return [{ dtype: a.dtype, shape: a.shape, data: out }];
  };
}

function ints(t: HostTensor): number[] {
  return Array.from(t.data);
}

/** Gathers `idx` along `axis` of `data`: the general form of Gather. */
export function gather(node: NodeIn, data: HostTensor, indices: HostTensor, axisAttr: number): HostTensor {
  const axis = normAxis(node, axisAttr, data.shape.length);
  const dim = data.shape[axis]!;
  const shape = [...data.shape.slice(0, axis), ...indices.shape, ...data.shape.slice(axis + 1)];
  const n = bounded(node, shape);
  const outer = sizeOf(data.shape.slice(0, axis));
  const inner = sizeOf(data.shape.slice(axis + 1));
  const out = data.data instanceof Float32Array ? new Float32Array(n) : new Float64Array(n);
  let at = 0;
  for (let o = 0; o < outer; o++) {
    for (const raw of indices.data) {
      const j = raw < 0 ? raw + dim : raw;
      if (!Number.isInteger(j) || j < 0 || j >= dim)
        fail(node, "an index is out of range", `-${dim} … ${dim - 1}`, String(raw));
      out.set(data.data.subarray((o * dim + j) * inner, (o * dim + j + 1) * inner), at);
      at += inner;
    }
  }
  return { dtype: data.dtype, shape, data: out };
}

/**
 * A tensor of `shape` whose element at coordinates c is x's at Σ offset(axis, c[axis]): the one strided walk behind
 * Transpose and Slice.
 */
function strided(
  node: NodeIn,
  x: HostTensor,
  shape: readonly number[],
  offset: (axis: number, c: number) => number,
): HostTensor {
  const n = bounded(node, shape);
  const outStrides = stridesOf(shape);
  const out = x.data instanceof Float32Array ? new Float32Array(n) : new Float64Array(n);
  for (let flat = 0; flat < n; flat++) {
    let rem = flat;
    let at = 0;
    for (let ax = 0; ax < shape.length; ax++) {
      const c = Math.floor(rem / outStrides[ax]!);
      rem -= c * outStrides[ax]!;
      at += offset(ax, c);
    }
    out[flat] = x.data[at]!;
  }
  return { dtype: x.dtype, shape: [...shape], data: out };
}

function transpose(node: NodeIn, x: HostTensor, perm: readonly number[]): HostTensor {
  const rank = x.shape.length;
  if (perm.length !== rank || [...perm].sort((a, b) => a - b).some((p, i) => p !== i))
    fail(node, "perm is not a permutation of the axes", `a permutation of 0 … ${rank - 1}`, `[${perm.join(", ")}]`);
  const src = stridesOf(x.shape);
  return strided(
    node,
    x,
    perm.map((p) => x.shape[p]!),
    (ax, c) => c * src[perm[ax]!]!,
  );
}

/** ONNX Reshape's target: 0 copies the input's dim (unless allowzero), one -1 is inferred. */
export function reshapeTarget(
  node: NodeIn,
  inShape: readonly number[],
  target: readonly number[],
  allowzero: boolean,
): number[] {
  const shape = target.map((d, i) =>
    d === 0 && !allowzero
      ? (inShape[i] ??
        fail(
          node,
          "a 0 in the shape copies a dim the input does not have",
          `at most ${inShape.length} dims`,
          `index ${i}`,
        ))
      : d,
  );
  const total = sizeOf(inShape);
  const minus = shape.filter((d) => d === -1).length;
  if (minus > 1) fail(node, "at most one -1 in a shape", "one -1", `[${target.join(", ")}]`);
  if (shape.some((d) => d < -1 || !Number.isInteger(d)))
    fail(node, "a shape holds whole numbers >= -1", "dims >= -1", `[${target.join(", ")}]`);
  if (minus === 1) {
    const known = shape.filter((d) => d !== -1).reduce((a, d) => a * d, 1);
    if (known === 0 || total % known !== 0)
      fail(
        node,
        "the -1 cannot be inferred",
        `a divisor of ${total} elements`,
        `[${target.join(", ")}] of ${formatShape(inShape)}`,
      );
    shape[shape.indexOf(-1)] = total / known;
  }
  if (sizeOf(shape) !== total)
    fail(
      node,
      "the shape does not hold the input's elements",
      `${total} elements (${formatShape(inShape)})`,
      `[${shape.join(", ")}]`,
    );
  return shape;
}

/** ONNX Slice's starts/ends/axes/steps, clamped as the spec says, for a tensor of `shape`. */
export function sliceSpec(
  node: NodeIn,
  shape: readonly number[],
  starts: readonly number[],
  ends: readonly number[],
  axesIn?: readonly number[],
  stepsIn?: readonly number[],
) {
  const axes = (axesIn ?? starts.map((_, i) => i)).map((a) => normAxis(node, a, shape.length));
  const steps = stepsIn ?? starts.map(() => 1);
  const spec = shape.map((d) => ({ start: 0, step: 1, count: d }));
  axes.forEach((ax, i) => {
    const d = shape[ax]!;
    const step = steps[i]!;
    if (step === 0 || !Number.isInteger(step)) fail(node, "a slice step is 0", "a non-zero integer", String(step));
    const clampS = (v: number) => (v < 0 ? v + d : v);
    let s = clampS(starts[i]!);
    let e = clampS(ends[i]!);
    if (step > 0) {
      s = Math.min(Math.max(s, 0), d);
      e = Math.min(Math.max(e, 0), d);
      spec[ax] = { start: s, step, count: Math.max(0, Math.ceil((e - s) / step)) };
    } else {
      s = Math.min(Math.max(s, -1), d - 1);
      e = Math.min(Math.max(e, -1), d - 1);
      spec[ax] = { start: s, step, count: Math.max(0, Math.ceil((e - s) / step)) };
    }
  });
  return spec;
}

function slice(
  node: NodeIn,
  x: HostTensor,
  spec: readonly { start: number; step: number; count: number }[],
): HostTensor {
  const src = stridesOf(x.shape);
  return strided(
    node,
    x,
    spec.map((s) => s.count),
    (ax, c) => (spec[ax]!.start + c * spec[ax]!.step) * src[ax]!,
  );
}

function expandTo(node: NodeIn, x: HostTensor, shape: readonly number[]): HostTensor {
  const n = bounded(node, shape);
  const idx = broadcastIndex(x.shape, shape);
  const out = x.data instanceof Float32Array ? new Float32Array(n) : new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = x.data[idx[i]!]!;
  return { dtype: x.dtype, shape: [...shape], data: out };
}

/** Squeeze/Unsqueeze axes: the `axes` input from opset 13, the attribute before. */
function axesOf(node: NodeIn, ins: readonly (HostTensor | undefined)[]): number[] | undefined {
  const t = ins[1];
  if (t) return ints(t);
  const a = attrInts(node, "axes");
  return a ? [...a] : undefined;
}

export function unsqueezeShape(node: NodeIn, shape: readonly number[], axes: readonly number[]): number[] {
  const rank = shape.length + axes.length;
  const at = new Set(axes.map((a) => normAxis(node, a, rank)));
  if (at.size !== axes.length) fail(node, "an axis is named twice", "distinct axes", `[${axes.join(", ")}]`);
  const out: number[] = [];
  let j = 0;
  for (let i = 0; i < rank; i++) out.push(at.has(i) ? 1 : shape[j++]!);
  return out;
}

export function squeezeShape(node: NodeIn, shape: readonly number[], axes: readonly number[] | undefined): number[] {
  if (!axes) return shape.filter((d) => d !== 1);
  const at = new Set(axes.map((a) => normAxis(node, a, shape.length)));
  for (const a of at)
    if (shape[a] !== 1) fail(node, `axis ${a} has size ${shape[a]}`, "a dim of 1 to squeeze", formatShape(shape));
  return shape.filter((_, i) => !at.has(i));
}

function cast(node: NodeIn, x: HostTensor): HostTensor {
  const to = ONNX_ELEM[attrInt(node, "to")];
  if (!to)
    fail(node, "Cast to a type the importer does not hold", "a float, int or bool type", String(attrInt(node, "to")));
  const f =
    to === "bool" ? (v: number) => (v !== 0 ? 1 : 0) : isFloat(to) ? (v: number) => v : (v: number) => Math.trunc(v);
  return hostTensor(to, x.shape, Array.from(x.data, f));
}

function erf(x: number): number {
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

export function splitSizes(node: NodeIn, dim: number, split: readonly number[] | undefined, outputs: number): number[] {
  if (split) {
    if (split.length !== outputs || split.reduce((a, b) => a + b, 0) !== dim || split.some((s) => s < 0))
      fail(node, "split sizes must add up to the axis", `${outputs} sizes summing to ${dim}`, `[${split.join(", ")}]`);
    return [...split];
  }
  const each = Math.ceil(dim / outputs);
  return Array.from({ length: outputs }, (_, i) => Math.max(0, Math.min(each, dim - i * each)));
}
