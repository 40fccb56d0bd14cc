// What every kernel adapter needs between a KernelCall and its pure Impl: fetch inputs by slot, and where the result
// goes. The call reaching a kernel has passed checkCall (the dispatch runs it before any kernel): its required inputs
// are present and of their declared dtype, its attributes normalized, its shapes those of the op's shape rule. What is
// left here is what only this executor can know: that a value is a host Tensor, and that a planned output is dense.
import {
  AttnGraphError,
  ShapeError,
  Tensor,
  describe,
  formatShape,
  isRowMajor,
  sameShape,
  sizeOf,
  type Shape,
} from "@attngraph/tensor";
import { dtypeError, kernelInputError, type KernelCall } from "@attngraph/graph";
import type { StridedView } from "./strided.js";

export type Call = KernelCall<Tensor>;

/** The input in `slot` (declared as `name`), required by the op's declaration, so present. */
export function requireInput(call: Call, slot: number, name: string): Tensor {
  return optionalInput(call, slot, name)!;
}

/** The inputs in slots 0, 1, … (declared as `names`, in slot order), all required by the op's declaration. */
export function requireInputs<const N extends readonly string[]>(call: Call, ...names: N): { [I in keyof N]: Tensor } {
  return names.map((name, slot) => requireInput(call, slot, name)) as { [I in keyof N]: Tensor };
}

/** The input in `slot`, or undefined when absent; something that is not a host float32 tensor is an "input" error. */
export function optionalInput(call: Call, slot: number, name: string): Tensor | undefined {
  const v: unknown = call.inputs[slot];
  if (v === undefined || v === null) return undefined;
  if (isHostTensor(v)) return v;
  // Only the view ops (reshape, transpose, slice) let other dtypes past checkCall; their cpu kernels view float32 data.
  if (Tensor.isTensor(v)) throw dtypeError(call, slot, name, "float32", v.dtype);
  throw notATensor(call, name, `input ${slot} (${name})`, v);
}

/**
 * The int32 input in `slot` (token ids, class targets), declared int32, so checkCall saw its dtype. The runtime hands
 * int32 inputs over as they came (upload is the identity on cpu), so the KernelCall's float32 typing does not hold for
 * these slots: this is where the type changes.
 */
export function intInput(call: Call, slot: number, name: string): Tensor<"int32"> {
  const v: unknown = call.inputs[slot];
  if (!Tensor.isTensor(v)) throw notATensor(call, name, `input ${slot} (${name})`, v);
  return v as Tensor<"int32">;
}

/** The checked call's attributes as its op declares them (checkCall normalized them): graph's, re-exported. */
export { attrsOf } from "@attngraph/graph";

/** A float32 host tensor's fields, read without trusting the value (a user may dispatch anything by hand). */
function isHostTensor(v: unknown): v is Tensor {
  const t = v as Tensor;
  return (
    typeof v === "object" &&
    v !== null &&
    t.data instanceof Float32Array &&
    Array.isArray(t.shape) &&
    Array.isArray(t.strides) &&
    typeof t.offset === "number"
  );
}

/** `what` (an input or the planned output, `field` of the node) is not a host tensor: an "input" error. */
function notATensor(call: Call, field: string, what: string, v: unknown): AttnGraphError {
  return kernelInputError(call, field, `${what} of op ${call.kind} is not a tensor`, "a Tensor", typeof v);
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
  if (!isHostTensor(out)) throw notATensor(call, "out", "planned output", out);
  const t: Tensor = out;
  if (!sameShape(t.shape, shape))
    throw new ShapeError(
      subject,
      `planned output of op ${call.kind} has the wrong shape`,
      formatShape(shape),
      formatShape(t.shape),
    );
  const size = sizeOf(shape);
  if (!isRowMajor(t) || !Number.isInteger(t.offset) || t.offset < 0 || t.offset + size > t.data.length) {
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
