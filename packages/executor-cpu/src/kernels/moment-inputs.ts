// The inputs both moment kernels read (adam-moment's moments, sgd-momentum's buffer): the running state, this step's
// gradient and the parameter its weight decay adds, in the same slots.
import type { Tensor } from "@attngraph/tensor";
import { optionalInput, requireInput, type Call } from "./adapter.js";

/**
 * [state (slot 0, named `stateName`), grad (slot 1), param (slot 2)]. param is present with weight decay (the shape
 * rule asks for it) and may be absent without.
 */
export function momentInputs(call: Call, stateName: string): [Tensor, Tensor, Tensor | undefined] {
  const state = requireInput(call, 0, stateName);
  const grad = requireInput(call, 1, "grad");
  return [state, grad, optionalInput(call, 2, "param")];
}
