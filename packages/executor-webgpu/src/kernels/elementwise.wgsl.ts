// The program most kernels are: one invocation per output element, dispatched as elementwiseGrid, each invocation
// returning at once past the element count. Written once here so that a kernel file holds only its params and the
// statements for one element; the WGSL it builds is what each kernel wrote out by hand before.
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { PRELUDE, Params, WG, elementwiseGrid } from "./shared.wgsl.js";

export interface ElementwiseProgram {
  /** For labels and errors; also the cacheKey unless one is given. */
  readonly name: string;
  readonly cacheKey?: string;
  readonly params: Params;
  /** Params word of the element count: word 0, where elementwiseParams puts it, unless told. */
  readonly count?: number;
  /**
   * Module-scope WGSL functions the body calls, placed after the prelude; a function where building them costs (an
   * expression's generator), so that it runs only on a pipeline-cache miss.
   */
  readonly helpers?: string | (() => string);
  /** The storage bindings (storageBindings, or WORD_BINDINGS). */
  readonly bindings: string;
  /** The flat element index as `body` names it (some bodies use `i` for a row index of their own). */
  readonly index?: string;
  /** WGSL statements for one element, its index in range. */
  readonly body: string;
  readonly inputs: ProgramInfo["inputs"];
  readonly output: GpuTensor;
  /** Invocations to dispatch: the output's size unless told. */
  readonly size?: number;
}

/**
 * The params of a program over `n` elements: the count is word 0 (where elementwiseProgram reads it unless told
 * otherwise), and each kernel file documents the words it appends after it.
 */
export function elementwiseParams(n: number): Params {
  const p = new Params();
  p.u32(n);
  return p;
}

/** WGSL: the entry point running `body` for elements `index` < pu(count). */
export function elementwiseMain(count: number, body: string, index = "i"): string {
  return /* wgsl */ `@compute @workgroup_size(${WG})
fn main(@builtin(global_invocation_id) g: vec3u, @builtin(num_workgroups) nw: vec3u) {
  let ${index} = flat_id(g, nw);
  if (${index} >= pu(${count}u)) { return; }
${body}
}`;
}

export function elementwiseProgram(e: ElementwiseProgram): ProgramInfo {
  return {
    name: e.name,
    cacheKey: e.cacheKey ?? e.name,
    code: () => {
      const helpers = typeof e.helpers === "function" ? e.helpers() : (e.helpers ?? "");
      return `${PRELUDE}${helpers}\n${e.bindings}\n${elementwiseMain(e.count ?? 0, e.body, e.index)}`;
    },
    params: e.params,
    inputs: e.inputs,
    output: e.output,
    workgroups: elementwiseGrid(e.size ?? e.output.size),
  };
}

/** Bindings of a program that moves elements as u32 words (bit-exact for either dtype): X in, Y out. */
export const WORD_BINDINGS = /* wgsl */ `@group(0) @binding(1) var<storage, read> X: array<u32>;
@group(0) @binding(2) var<storage, read_write> Y: array<u32>;`;
