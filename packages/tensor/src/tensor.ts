import { copyStrided } from "./copy-strided.js";
import { ShapeError } from "./errors.js";
import { checkShape, contiguousStrides, formatShape, sizeOf, type Shape } from "./shape.js";
import { formatTensor } from "./format.js";
import { isDensePermutation, isRowMajor } from "./strides.js";
import { inferDim, viewStrides } from "./reshape.js";

/** A nested array of numbers, as PyTorch's `tensor([[...]])` takes it. */
export type NestedArray = number | readonly NestedArray[];

/**
 * Element types. float32 is what every computation works in; int32 holds integers that index something (token ids,
 * class targets), so they are never floats in disguise: an op that reads ids declares an int32 input, and a float32
 * tensor there is an error before anything runs.
 */
export type DType = "float32" | "int32";

/** The typed array behind a tensor of dtype `D`. */
export type DataOf<D extends DType> = D extends "int32" ? Int32Array : Float32Array;

/** A tensor of either dtype: what APIs that accept any tensor (inputs, taps, printing) take. */
export type AnyTensor = Tensor<DType>;

/** The int32 range, for checks of values that become int32 elements. */
export const INT32_MIN = -(2 ** 31);
export const INT32_MAX = 2 ** 31 - 1;

/**
 * A tensor: a view (shape, strides, offset) onto a typed array that may be shared with other views; float32 by default,
 * int32 for integer data (`Tensor.int32`). `reshape`, `transpose` and `permute` return views without copying where the
 * layout allows it; `contiguous()` copies only when the view is not already row-major and dense.
 */
// Recognises a Tensor by a global symbol rather than `instanceof`, so a tensor made by a second copy of this package
// (two versions in one bundle) is still a tensor, while a plain object that merely has a `shape` is not.
const TENSOR_MARKER = Symbol.for("attngraph.tensor");

export class Tensor<D extends DType = "float32"> {
  readonly data: DataOf<D>;
  /** The element type, from the typed array: "int32" for an Int32Array, else "float32". */
  readonly dtype: D;
  readonly shape: Shape;
  /** Strides in elements, one per dim. */
  readonly strides: readonly number[];
  /** Index into `data` of element [0, 0, ...]. */
  readonly offset: number;

  // NoInfer: `new Tensor(float32Array, shape)` is a Tensor<"float32"> (the default), and an Int32Array needs `Tensor<"int32">`
  // spelled out (or Tensor.int32), so an int tensor never passes for a float one by inference.
  constructor(data: DataOf<NoInfer<D>>, shape: Shape, strides?: readonly number[], offset = 0) {
    checkShape("tensor", shape);
    if (!(data instanceof Float32Array) && !(data instanceof Int32Array)) {
      throw new ShapeError(
        "tensor",
        "data must be a Float32Array or an Int32Array",
        "Float32Array | Int32Array",
        describeData(data),
      );
    }
    const st = strides ?? contiguousStrides(shape);
    if (st.length !== shape.length) {
      throw new ShapeError(
        "tensor",
        "strides do not match the shape's rank",
        `${shape.length} strides`,
        `${st.length}`,
      );
    }
    if (!st.every((s) => Number.isSafeInteger(s)) || !Number.isSafeInteger(offset)) {
      throw new ShapeError(
        "tensor",
        "strides and offset must be integers",
        "integers",
        `strides ${formatShape(st)}, offset ${offset}`,
      );
    }
    if (sizeOf(shape) > 0) {
      // The lowest and highest element the view reaches (strides may be negative).
      let first = offset;
      let last = offset;
      for (let i = 0; i < shape.length; i++) {
        const reach = (shape[i]! - 1) * st[i]!;
        if (reach < 0) first += reach;
        else last += reach;
      }
      if (first < 0 || last >= data.length) {
        throw new ShapeError(
          "tensor",
          "view reaches outside its buffer",
          `indices within [0, ${data.length})`,
          `shape ${formatShape(shape)}, strides ${formatShape(st)}, offset ${offset}`,
        );
      }
    }
    this.data = data;
    this.dtype = (data instanceof Int32Array ? "int32" : "float32") as D;
    this.shape = Object.freeze([...shape]);
    this.strides = Object.freeze([...st]);
    this.offset = offset;
  }

  /** On the prototype, not on each instance: the brand costs nothing per tensor. */
  get [TENSOR_MARKER](): true {
    return true;
  }

  /** Whether `value` is a Tensor of this package (any copy of it); a duck-typed `{ shape, data }` is not. */
  static isTensor(value: unknown): value is AnyTensor {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[TENSOR_MARKER] === true;
  }

  /**
   * A new dense int32 tensor (token ids, targets) from integers. A value that is not an integer in the int32 range is
   * a ShapeError naming its index: ids are never rounded or wrapped silently.
   */
  static int32(values: ArrayLike<number>, shape: Shape): Tensor<"int32"> {
    checkValues("Tensor.int32", values, shape);
    const data = new Int32Array(values.length);
    for (let i = 0; i < values.length; i++) {
      const v = values[i]!;
      if (!Number.isInteger(v) || v < INT32_MIN || v > INT32_MAX) {
        throw new ShapeError(`Tensor.int32[${i}]`, "not an int32 value", "an integer in [-2^31, 2^31 - 1]", String(v));
      }
      data[i] = v;
    }
    return new Tensor<"int32">(data, shape);
  }

  /** A new dense tensor holding a float32 copy of `values` (row-major). */
  static from(values: ArrayLike<number>, shape: Shape): Tensor {
    checkValues("Tensor.from", values, shape);
    return new Tensor(Float32Array.from(values), shape);
  }

  static zeros(shape: Shape): Tensor {
    checkShape("Tensor.zeros", shape);
    return new Tensor(new Float32Array(sizeOf(shape)), shape);
  }

  /** From nested arrays, like `torch.tensor([[1, 2], [3, 4]])`. Ragged input is a ShapeError. */
  static fromNested(nested: NestedArray): Tensor {
    const shape: number[] = [];
    for (let level: NestedArray = nested; Array.isArray(level); level = (level as readonly NestedArray[])[0] ?? 0) {
      shape.push((level as readonly NestedArray[]).length);
    }
    const flat: number[] = [];
    const walk = (v: NestedArray, depth: number): void => {
      if (depth === shape.length) {
        if (typeof v !== "number") throw new ShapeError("Tensor.fromNested", "ragged nesting", "a number", "an array");
        flat.push(v);
        return;
      }
      if (!Array.isArray(v) || v.length !== shape[depth]) {
        throw new ShapeError(
          "Tensor.fromNested",
          `ragged nesting at depth ${depth}`,
          `${shape[depth]} items`,
          Array.isArray(v) ? `${v.length}` : "a number",
        );
      }
      for (const item of v as readonly NestedArray[]) walk(item, depth + 1);
    };
    walk(nested, 0);
    return Tensor.from(flat, shape);
  }

  get size(): number {
    return sizeOf(this.shape);
  }

  get rank(): number {
    return this.shape.length;
  }

  /** True when the elements are dense and row-major from `offset` (size-1 dims may have any stride). */
  isContiguous(): boolean {
    return isRowMajor(this);
  }

  /** This tensor if it is contiguous, otherwise a dense row-major copy. */
  contiguous(): Tensor<D> {
    return this.isContiguous() ? this : this.clone();
  }

  /** A dense copy that shares nothing with this tensor, of the same dtype. */
  clone(): Tensor<D> {
    const out = (
      this.data instanceof Int32Array ? new Int32Array(this.size) : new Float32Array(this.size)
    ) as DataOf<D>;
    this.copyInto(out);
    return new Tensor<D>(out, this.shape);
  }

  /**
   * A copy that shares nothing with this tensor, in this tensor's own layout when that layout is dense in some order
   * of its axes (row-major, or a transpose of a dense tensor): then one plain copy of the span (a memcpy), where
   * clone() would reorder a transpose element by element. Any other view is cloned dense row-major.
   */
  snapshot(): Tensor<D> {
    if (this.size === 0 || isRowMajor(this) || !isDensePermutation(this)) return this.clone();
    const data = this.data.slice(this.offset, this.offset + this.size) as DataOf<D>;
    return new Tensor<D>(data, this.shape, this.strides);
  }

  /** Writes the elements in row-major order into `out` starting at `at` (converted to `out`'s element type). */
  copyInto(out: Float32Array | Int32Array, at = 0): void {
    const n = this.size;
    if (!Number.isSafeInteger(at) || at < 0 || at + n > out.length) {
      throw new ShapeError(
        "copyInto",
        "the elements do not fit in the output",
        `${n} elements from index ${at} within ${out.length}`,
        `index ${at}`,
      );
    }
    if (n === 0) return;
    if (this.isContiguous()) {
      out.set(this.data.subarray(this.offset, this.offset + n), at);
      return;
    }
    copyStrided(this, out, at);
  }

  /**
   * A tensor with the same elements in a new shape. A view when the layout allows it (always for contiguous input),
   * otherwise a copy, like `torch.reshape`. One dim may be -1 (inferred).
   */
  reshape(shape: Shape): Tensor<D> {
    const target = inferDim(shape, this.size);
    const strides = viewStrides(this.shape, this.strides, target);
    if (strides) return new Tensor<D>(this.data, target, strides, this.offset);
    return new Tensor<D>(this.clone().data, target);
  }

  /** Like `reshape` but never copies: a ShapeError when the layout does not allow a view (like `torch.view`). */
  view(shape: Shape): Tensor<D> {
    const target = inferDim(shape, this.size);
    const strides = viewStrides(this.shape, this.strides, target);
    if (!strides) {
      throw new ShapeError(
        "view",
        "this layout cannot be viewed with the new shape; use reshape() or contiguous()",
        formatShape(target),
        `strides ${formatShape(this.strides)}`,
      );
    }
    return new Tensor<D>(this.data, target, strides, this.offset);
  }

  /** Permutes the dims (a view). `perm[i]` is the source dim of output dim i. */
  permute(perm: readonly number[]): Tensor<D> {
    checkPerm(perm, this.rank);
    return new Tensor<D>(
      this.data,
      perm.map((p) => this.shape[p]!),
      perm.map((p) => this.strides[p]!),
      this.offset,
    );
  }

  /** Swaps two dims (a view), like `torch.transpose(dim0, dim1)`. Negative dims count from the end. */
  transpose(dim0: number, dim1: number): Tensor<D> {
    const a = normDim(dim0, this.rank);
    const b = normDim(dim1, this.rank);
    const perm = [...this.shape.keys()];
    perm[a] = b;
    perm[b] = a;
    return this.permute(perm);
  }

  /** The element at a multi-index. */
  get(...index: number[]): number {
    if (index.length !== this.rank) {
      throw new ShapeError("Tensor.get", "index rank does not match", `${this.rank} indices`, `${index.length}`);
    }
    let p = this.offset;
    for (let i = 0; i < index.length; i++) {
      const j = index[i]!;
      if (!Number.isInteger(j) || j < 0 || j >= this.shape[i]!) {
        throw new ShapeError("Tensor.get", `index ${i} out of range`, `0..${this.shape[i]! - 1}`, `${j}`);
      }
      p += j * this.strides[i]!;
    }
    return this.data[p]!;
  }

  /** The elements in row-major order, as a fresh Int32Array (float32 elements are truncated toward zero). */
  toInt32Array(): Int32Array {
    const out = new Int32Array(this.size);
    this.copyInto(out);
    return out;
  }

  /** The elements in row-major order, as a fresh Float32Array. */
  toFloat32Array(): Float32Array {
    const out = new Float32Array(this.size);
    this.copyInto(out);
    return out;
  }

  /** The elements in row-major order, as plain numbers (int32 elements exactly: 2^31 − 1 is no float32). */
  toArray(): number[] {
    return Array.from(this.#flat());
  }

  toNested(): NestedArray {
    const flat = this.#flat();
    const build = (depth: number, start: number): NestedArray => {
      if (depth === this.rank) return flat[start]!;
      const step = sizeOf(this.shape.slice(depth + 1));
      return Array.from({ length: this.shape[depth]! }, (_, i) => build(depth + 1, start + i * step));
    };
    return build(0, 0);
  }

  #flat(): Float32Array | Int32Array {
    return this.data instanceof Int32Array ? this.toInt32Array() : this.toFloat32Array();
  }

  /** PyTorch-style text: `tensor([[0.1000, 0.2000], ...])`. */
  toString(): string {
    return this.dtype === "int32"
      ? formatTensor(this.shape, this.toInt32Array(), "int32")
      : formatTensor(this.shape, this.toFloat32Array());
  }
}

/** A valid `shape` and exactly its element count of `values` (what a new dense tensor is made of), else a ShapeError. */
function checkValues(subject: string, values: ArrayLike<number>, shape: Shape): void {
  checkShape(subject, shape);
  if (values.length !== sizeOf(shape)) {
    throw new ShapeError(
      subject,
      "value count does not match the shape",
      `${sizeOf(shape)} values for ${formatShape(shape)}`,
      `${values.length}`,
    );
  }
}

function describeData(data: unknown): string {
  if (data === null) return "null";
  if (typeof data !== "object") return typeof data;
  return (data as object).constructor?.name ?? "an object";
}

function normDim(dim: number, rank: number): number {
  const d = dim < 0 ? dim + rank : dim;
  if (!Number.isInteger(d) || d < 0 || d >= rank) {
    throw new ShapeError("transpose", "dim out of range", `-${rank}..${rank - 1}`, `${dim}`);
  }
  return d;
}

function checkPerm(perm: readonly number[], rank: number): void {
  const seen = new Set(perm);
  if (perm.length !== rank || seen.size !== rank || perm.some((p) => !Number.isInteger(p) || p < 0 || p >= rank)) {
    throw new ShapeError(
      "permute",
      "not a permutation of the dims",
      `a permutation of 0..${rank - 1}`,
      formatShape(perm),
    );
  }
}

export { formatShape };
