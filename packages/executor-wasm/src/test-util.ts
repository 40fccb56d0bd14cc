// Test helpers: run one op on the wasm executor and on the CPU executor (the reference) from host tensors.
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { Tensor, type AnyTensor, type Shape } from "@attngraph/tensor";
import type { UnsignalledCall, WasmExecutor, WasmKernel } from "./executor.js";
import { createWasmExecutor, type CreateWasmExecutorOptions } from "./register-kernels.js";
import { WasmValue } from "./value.js";

export const cpu = createCpuExecutor();

export async function wasmExecutor(options: CreateWasmExecutorOptions = {}): Promise<WasmExecutor> {
  const ex = createWasmExecutor(options);
  await ex.init();
  return ex;
}

/** One op's call, less its inputs. */
export interface OpCall {
  readonly kind: string;
  readonly node: string;
  readonly attrs: Record<string, unknown>;
  readonly outShape: Shape;
}

/** onWasm's arguments after the executor: the op, its host inputs and output shape, its node (the kind if not given). */
type OpArgs = [
  kind: string,
  attrs: Record<string, unknown>,
  inputs: readonly (AnyTensor | undefined)[],
  outShape: Shape,
  node?: string,
];

/** Uploads, dispatches, downloads and releases everything: the result as a host tensor. */
export function onWasm(ex: WasmExecutor, ...op: OpArgs): Tensor {
  return onWasmWith(ex, (t) => ex.upload(t), ...op);
}

export function onCpu(
  kind: string,
  attrs: Record<string, unknown>,
  inputs: readonly (Tensor | undefined)[],
  outShape: Shape,
): Tensor {
  return cpu.dispatch({ kind, node: kind, attrs, inputs, outShape }).contiguous();
}

/** A bias-free projection x [..., In] · w [Out, In]ᵀ named `node`, into `out` when given, as tests dispatch it by hand. */
export function projectionCall(node: string, x: WasmValue, w: WasmValue, out?: WasmValue): UnsignalledCall {
  const outShape = [...x.shape.slice(0, -1), w.shape[0]!];
  return { kind: "projection", node, attrs: {}, inputs: [x, w, undefined], outShape, ...(out && { out }) };
}

/** A user kernel that traps: a copy from an address past the module's memory. Tests register it as "trap". */
export const trapKernel: WasmKernel = (call, ctx) => {
  const x = call.inputs[0]!;
  ctx.exports.copy(0xfffff000, ctx.desc(x), ctx.alloc(x.shape, call.node).address); // out of bounds
  return x;
};

/** Deterministic values in [-1, 1) (a small LCG), so a failure reproduces. */
export function random(shape: Shape, seed: number, scale = 1): Tensor {
  let s = seed >>> 0 || 1;
  const n = shape.reduce((a, b) => a * b, 1);
  const data = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    data[i] = ((s / 2 ** 32) * 2 - 1) * scale;
  }
  return new Tensor(data, shape);
}

/**
 * Views [rows, n] strided along their last axis (a transposed [n, rows]), of odd and even lengths and of length 1,
 * values in [−6, 6): what an elementwise kernel's gathered lanes must read as its dense path does.
 */
export function stridedRows(): Tensor[] {
  const sizes = [
    [7, 5],
    [3, 1],
    [2, 13],
    [4, 8],
  ] as const;
  return sizes.map(([rows, n]) => random([n, rows], rows * 31 + n, 6).transpose(0, 1));
}

/**
 * The pairs a two-input kernel's strided paths are tested on: each input strided alone (its strided twin beside the
 * other's plain one), then both.
 */
export function stridedPairs<T>([a, b]: readonly [T, T], [aT, bT]: readonly [T, T]): (readonly [T, T])[] {
  return [
    [aT, b],
    [a, bT],
    [aT, bT],
  ];
}

/** The largest |a − b| / (abs + rel · |b|) over all elements; NaN where NaN-ness differs. */
export function worst(a: Tensor, b: Tensor, abs = 1e-5, rel = 1e-4): number {
  const x = a.toFloat32Array();
  const y = b.toFloat32Array();
  if (x.length !== y.length) return Infinity;
  let w = 0;
  for (let i = 0; i < x.length; i++) {
    const p = x[i]!;
    const q = y[i]!;
    if (Number.isNaN(p) || Number.isNaN(q)) {
      if (Number.isNaN(p) !== Number.isNaN(q)) return NaN;
      continue;
    }
    if (p === q) continue;
    w = Math.max(w, Math.abs(p - q) / (abs + rel * Math.abs(q)));
  }
  return w;
}

/**
 * `t` on the wasm executor with its own layout: `upload` copies a view dense, so a kernel would never see its strides;
 * this uploads the whole storage and wraps it in a value with t's shape, strides, offset and dtype (taking over the
 * upload's reference: releasing the view frees the block).
 */
export function uploadView(ex: WasmExecutor, t: AnyTensor): WasmValue {
  const n = t.data.length;
  const whole =
    t.data instanceof Int32Array ? ex.upload(new Tensor<"int32">(t.data, [n])) : ex.upload(new Tensor(t.data, [n]));
  return new WasmValue(whole.block, t.shape, t.strides, whole.offset + t.offset, t.dtype);
}

/** `onWasm` with every input uploaded with its own layout (`uploadView`): the kernels' strided paths. */
export function onWasmViews(ex: WasmExecutor, ...op: OpArgs): Tensor {
  return onWasmWith(ex, (t) => uploadView(ex, t), ...op);
}

/** Dispatches the op on the inputs as `upload` puts them on `ex`; downloads the output and releases everything. */
function onWasmWith(
  ex: WasmExecutor,
  upload: (t: AnyTensor) => WasmValue,
  ...[kind, attrs, inputs, outShape, node = kind]: OpArgs
): Tensor {
  const values = inputs.map((t) => (t === undefined ? undefined : upload(t)));
  try {
    const out = ex.dispatch({ kind, node, attrs, inputs: values, outShape });
    const host = ex.download(out).contiguous();
    ex.release(out);
    return host;
  } finally {
    for (const v of values) if (v) ex.release(v);
  }
}

/** The row-major elements of `t` as float64 (the tests' references compute in float64). */
export function f64(t: AnyTensor): Float64Array {
  return Float64Array.from(t.dtype === "int32" ? t.toInt32Array() : t.toFloat32Array());
}

/** Runs `fn` and returns what it threw (undefined if it returned). */
export function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return undefined;
}
