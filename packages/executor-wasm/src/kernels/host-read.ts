// The elements of a value read on the host, row-major, for the checks that must see every value before a kernel
// writes anything (user mask values are 0/1, ids and targets within [0, V)): the shared checks of @attngraph/graph
// (findNonBinary, findBadIndex) take an array in the value's own shape. A dense value is read in place, without a copy.
import type { WasmContext } from "../context.js";
import type { WasmValue } from "../value.js";

/**
 * `v`'s elements in row-major order, as its dtype reads them. For a dense value this is a view of the module's memory,
 * valid only until the next allocation (a memory.grow detaches it): use it at once. A strided one is gathered into a
 * new array.
 */
export function hostElements(ctx: WasmContext, v: WasmValue): Float32Array | Int32Array {
  const memory = v.dtype === "int32" ? ctx.i32() : ctx.f32();
  const base = v.address / 4;
  if (v.dense) return memory.subarray(base, base + v.size);
  const out = v.dtype === "int32" ? new Int32Array(v.size) : new Float32Array(v.size);
  const rank = v.rank;
  const idx = new Array<number>(rank).fill(0);
  let at = base;
  for (let k = 0; k < out.length; k++) {
    out[k] = memory[at]!;
    // Next multi-index, odometer style, keeping the element address in step.
    for (let d = rank - 1; d >= 0; d--) {
      at += v.strides[d]!;
      if (++idx[d]! < v.shape[d]!) break;
      at -= v.strides[d]! * v.shape[d]!;
      idx[d] = 0;
    }
  }
  return out;
}
