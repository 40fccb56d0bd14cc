// The one-number inputs of the optimizer ops: the step count t (adam-step, sgd-momentum; grad-accumulate's micro step k)
// and a learning-rate factor lrScale (adam-step, sgd-step). Their shapes ([] or [1]) are the declarations'; their
// values are data, which no declaration can see, so they are checked here, twice over: when the input is (a view of) a
// host upload, the executor still holds that host tensor, and the value is checked on the host before anything is
// encoded (an "input" error naming `<node>.step` or `<node>.lrScale`, as on the cpu and wasm executors, no readback);
// a value computed on the GPU is checked in the shader (`valid_step`, `valid_lr_scale`), where a bad one makes every
// output element NaN (a kernel cannot throw from the GPU).
import type { GpuTensor } from "../gpu-tensor.js";
import type { Params } from "./shared.wgsl.js";
import type { Call } from "./inputs.js";
// Shared by every executor (@attngraph/graph kernel-checks): what a step count and a learning-rate factor may be.
import { checkLrScaleValue, checkOptimizerStepValue } from "@attngraph/graph";

/**
 * The one number of a one-element input from the host tensor it was uploaded from, when it was (a view of) one: the
 * element at the view's offset of the dense upload. undefined for a value computed on the GPU, which only the shader
 * sees.
 */
function hostScalar(t: GpuTensor): number | undefined {
  const host = t.storage.host;
  if (host === undefined || host.dtype !== "float32" || t.offset >= host.size) return undefined;
  const index: number[] = [];
  let rest = t.offset;
  for (let d = host.rank - 1; d >= 0; d--) {
    index.unshift(rest % host.shape[d]!);
    rest = Math.floor(rest / host.shape[d]!);
  }
  return host.get(...index);
}

/** The step input, when it came from the host: an integer >= 1, else an "input" error naming `<node>.step`. */
export function checkStep(call: Call, step: GpuTensor): void {
  const t = hostScalar(step);
  if (t !== undefined) checkOptimizerStepValue(call, t);
}

/** An lrScale input, when it came from the host: a finite number >= 0, else an "input" error naming `<node>.lrScale`. */
export function checkLrScale(call: Call, lrScale: GpuTensor): void {
  const s = hostScalar(lrScale);
  if (s !== undefined) checkLrScaleValue(call, s);
}

/** WGSL: `valid_step(t)`, t finite (decided on its bits), >= 1 and an integer. */
export const VALID_STEP_WGSL = /* wgsl */ `
fn valid_step(t: f32) -> bool {
  if ((bitcast<u32>(t) & 0x7f800000u) == 0x7f800000u) { return false; }
  return t >= 1.0 && floor(t) == t;
}`;

/** WGSL: `valid_lr_scale(s)`, s finite (decided on its bits) and >= 0. */
export const LR_SCALE_WGSL = /* wgsl */ `
fn valid_lr_scale(s: f32) -> bool { return (bitcast<u32>(s) & 0x7f800000u) != 0x7f800000u && s >= 0.0; }`;

/** Where packLrScale put the lrScale: its view's word and the word saying whether it is there. */
export interface LrScaleWords {
  readonly view: number;
  readonly present: number;
}

/** Params: the lrScale view (`unused`'s when absent, then never read), then whether it is there. */
export function packLrScale(p: Params, lrScale: GpuTensor | undefined, unused: GpuTensor): LrScaleWords {
  const view = p.view(lrScale ?? unused);
  return { view, present: p.u32(lrScale ? 1 : 0) };
}

/**
 * WGSL: the variable `lr` times the lrScale read from buffer LS when there is one (LR_SCALE_WGSL bound), checked there
 * as the host checks an uploaded one (a bad factor makes the element NaN); `then` runs after, with the scaled lr.
 */
export function lrScaleWgsl(w: LrScaleWords, then = ""): string {
  return `if (pu(${w.present}u) != 0u) {
    let s = LS[view_offset(${w.view}u)];
    if (!valid_lr_scale(s)) { Y[i] = nan(); return; }
    lr = lr * s;${then}
  }`;
}
