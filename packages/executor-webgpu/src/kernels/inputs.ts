import { builtinOpDef, kernelInputError, type KernelCall } from "@attngraph/graph";
import { GpuTensor } from "../gpu-tensor.js";

export type Call = KernelCall<GpuTensor>;

/** Input `slot`, which the op's declaration requires (checkCall has seen it there). */
export function input(call: Call, slot: number): GpuTensor {
  return call.inputs[slot]!;
}

/** Optional input `slot`, or undefined when absent (a caller's null means absent too, as checkCall reads it). */
export function optionalInput(call: Call, slot: number): GpuTensor | undefined {
  return call.inputs[slot] ?? undefined;
}

/** The checked call's attributes as its op declares them (checkCall normalized them): graph's, re-exported. */
export { attrsOf } from "@attngraph/graph";

/**
 * Every input of a built-in op's call is a value of this executor (or absent): anything else (a host tensor not
 * uploaded, a number) is an "input" error naming `<node>.<slot name>`, before checkCall reads shapes and dtypes off it.
 * A user's kernel takes what its author decides, so user kinds are not checked here.
 */
export function expectGpuValues(call: KernelCall<unknown>): void {
  const def = builtinOpDef(call.kind);
  if (def === undefined) return;
  call.inputs.forEach((v, slot) => {
    if (v === undefined || v === null || v instanceof GpuTensor) return;
    const name = def.inputs[slot]?.name ?? String(slot);
    const got = typeof v === "object" ? "an object that is not a webgpu value (upload it first)" : typeof v;
    throw kernelInputError(
      call,
      name,
      `input ${slot} (${name}) of op ${call.kind} is not a webgpu value`,
      "a GpuTensor",
      got,
    );
  });
}
