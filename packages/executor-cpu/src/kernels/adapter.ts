// What every kernel adapter needs between a KernelCall and its pure Impl: fetch inputs by slot, check ranks and dims,
// and report bad attributes, each error naming `<node>.<field>`. Kernels never crash on bad calls: a call may come from
// a user dispatching by hand, not only from a validated graph.
import {
  AttnGraphError,
  ShapeError,
  Tensor,
  describe,
  formatShape,
  sameShape,
  sizeOf,
  type Shape,
} from "@attngraph/tensor";
import type { KernelCall } from "@attngraph/graph";
import type { StridedView } from "./strided.js";
// Shared by every executor (@attngraph/graph kernel-checks), re-exported under the names this package always used.
import { attrError, dtypeError, expectDim, expectHeadGroups, expectRank } from "@attngraph/graph";
export { attrError, expectDim, expectHeadGroups, expectRank };

export type Call = KernelCall<Tensor>;

/** The input in `slot` (declared as `name`); missing → an "input" error naming node and slot. */
export function requireInput(call: Call, slot: number, name: string): Tensor {
  const v = optionalInput(call, slot, name);
  if (v === undefined) {
    const subject = `${call.node}.${name}`;
    throw new AttnGraphError(
      "input",
      describe(subject, `missing required input ${slot} (${name}) of op ${call.kind}`, "a tensor", "undefined"),
      {
        subject,
        expected: "a tensor",
        got: "undefined",
      },
    );
  }
  return v;
}

/** The input in `slot`, or undefined when absent; something that is not a float32 tensor is an "input" error. */
export function optionalInput(call: Call, slot: number, name: string): Tensor | undefined {
  const v: unknown = call.inputs[slot];
  if (v === undefined || v === null) return undefined;
  if (Tensor.isTensor(v) && v.dtype !== "float32") throw dtypeError(call, slot, name, "float32", v.dtype);
  const t = v as Tensor;
  if (
    typeof v !== "object" ||
    !(t.data instanceof Float32Array) ||
    !Array.isArray(t.shape) ||
    !Array.isArray(t.strides) ||
    typeof t.offset !== "number"
  ) {
    const subject = `${call.node}.${name}`;
    throw new AttnGraphError(
      "input",
      describe(subject, `input ${slot} (${name}) of op ${call.kind} is not a tensor`, "a Tensor", typeof v),
      {
        subject,
        expected: "a Tensor",
        got: typeof v,
      },
    );
  }
  return t;
}

/**
 * The int32 input in `slot` (token ids, class targets): a float32 tensor there is an "input" error, never a silent
 * conversion (a float id of 2.7 has no meaning). The runtime hands int32 inputs over as they came (upload is the
 * identity on cpu), so the KernelCall's float32 typing does not hold for these slots: this is where the type is checked.
 */
export function intInput(call: Call, slot: number, name: string): Tensor<"int32"> {
  const v: unknown = call.inputs[slot];
  if (v === undefined || v === null) requireInput(call, slot, name); // throws the missing-input error
  if (!Tensor.isTensor(v)) optionalInput(call, slot, name); // throws the not-a-tensor error
  const t = v as Tensor<"int32"> | Tensor;
  if (t.dtype !== "int32") throw dtypeError(call, slot, name, "int32", t.dtype);
  return t as Tensor<"int32">;
}

/**
 * Where a compute kernel writes its result of `shape`: the elements of `call.out` when the planner gave one, else
 * undefined (the Impl allocates). `out` holds garbage and is never read. One that is not a dense row-major tensor of
 * exactly `shape` is a caller's bug, reported instead of silently allocating.
 */
export function outData(call: Call, shape: Shape): Float32Array | undefined {
  const out: unknown = call.out;
  if (out === undefined || out === null) return undefined;
  const subject = `${call.node}.out`;
  const t = out as Tensor;
  if (
    typeof out !== "object" ||
    !(t.data instanceof Float32Array) ||
    !Array.isArray(t.shape) ||
    !Array.isArray(t.strides) ||
    typeof t.offset !== "number"
  ) {
    throw new AttnGraphError(
      "input",
      describe(subject, `planned output of op ${call.kind} is not a tensor`, "a Tensor", typeof out),
      {
        subject,
        expected: "a Tensor",
        got: typeof out,
      },
    );
  }
  if (!sameShape(t.shape, shape))
    throw new ShapeError(
      subject,
      `planned output of op ${call.kind} has the wrong shape`,
      formatShape(shape),
      formatShape(t.shape),
    );
  const size = sizeOf(shape);
  if (!isDense(t.shape, t.strides) || !Number.isInteger(t.offset) || t.offset < 0 || t.offset + size > t.data.length) {
    const got = `strides ${formatShape(t.strides)}, offset ${t.offset} in a buffer of ${t.data.length}`;
    const expected = "contiguous strides within the buffer";
    throw new AttnGraphError(
      "input",
      describe(subject, `planned output of op ${call.kind} must be dense and row-major`, expected, got),
      {
        subject,
        expected,
        got,
      },
    );
  }
  return t.data.subarray(t.offset, t.offset + size);
}

/** What a compute kernel returns: `call.out` itself when it wrote there (see `outData`), else a new tensor on `data`. */
export function result(call: Call, data: Float32Array, shape: Shape): Tensor {
  return call.out !== undefined && call.out !== null ? call.out : new Tensor(data, shape);
}

/** Wraps a view an Impl computed (reshape/transpose/slice) as a Tensor sharing the input's buffer. */
export function toTensor(view: StridedView): Tensor {
  return view instanceof Tensor ? view : new Tensor(view.data, view.shape, view.strides, view.offset);
}

/** Row-major and dense (size-1 dims may have any stride), as `Tensor.isContiguous`. */
function isDense(shape: Shape, strides: readonly number[]): boolean {
  let expected = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    if (shape[i] !== 1 && strides[i] !== expected) return false;
    expected *= shape[i]!;
  }
  return true;
}
