// The host ops that move elements rather than compute them: Gather, Transpose, Slice, Expand, and the shape rules of
// Reshape, Squeeze/Unsqueeze and Split, which the lowering (lower-ops.ts) applies to runtime values too.
import { broadcastIndex } from "./broadcast-host.js";
import { formatShape, sizeOf, stridesOf, type HostTensor } from "./host-tensor.js";
import { attrInts, bounded, fail, ints, normAxis } from "./node-args.js";
import type { NodeIn } from "./read-model.js";

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

export function transpose(node: NodeIn, x: HostTensor, perm: readonly number[]): HostTensor {
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

export function slice(
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

export function expandTo(node: NodeIn, x: HostTensor, shape: readonly number[]): HostTensor {
  const n = bounded(node, shape);
  const idx = broadcastIndex(x.shape, shape);
  const out = x.data instanceof Float32Array ? new Float32Array(n) : new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = x.data[idx[i]!]!;
  return { dtype: x.dtype, shape: [...shape], data: out };
}

/** Squeeze/Unsqueeze axes: the `axes` input from opset 13, the attribute before. */
export function axesOf(node: NodeIn, ins: readonly (HostTensor | undefined)[]): number[] | undefined {
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

export function splitSizes(node: NodeIn, dim: number, split: readonly number[] | undefined, outputs: number): number[] {
  if (split) {
    if (split.length !== outputs || split.reduce((a, b) => a + b, 0) !== dim || split.some((s) => s < 0))
      fail(node, "split sizes must add up to the axis", `${outputs} sizes summing to ${dim}`, `[${split.join(", ")}]`);
    return [...split];
  }
  const each = Math.ceil(dim / outputs);
  return Array.from({ length: outputs }, (_, i) => Math.max(0, Math.min(each, dim - i * each)));
}
