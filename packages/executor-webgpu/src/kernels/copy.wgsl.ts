// copy: a strided view into a dense row-major tensor. Used where a view cannot express a result (reshape of a
// permuted tensor) and where a program needs dense input. Elements move as u32 words, so a copy is bit-exact for either
// dtype: an int32 id loaded as f32 could be flushed (a denormal's bits) or canonicalised (a NaN's), and so could a NaN
// payload of a float.
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { elementwiseProgram, WORD_BINDINGS } from "./elementwise.wgsl.js";
import { Params } from "./shared.wgsl.js";

/** Where a copy writes: a view of the output buffer (shape of the source), instead of dense from element 0. */
export interface CopyDestination {
  readonly strides: readonly number[];
  readonly offset: number;
}

/**
 * Params: the source view at word 0, then the element count; with `into`, the destination's view too (kv-append
 * writes a strided x into its cache at position `past` that way).
 */
export function copyProgram(x: GpuTensor, out: GpuTensor, into?: CopyDestination): ProgramInfo {
  const params = new Params();
  params.view(x);
  const dv =
    into === undefined ? undefined : params.view({ shape: x.shape, strides: into.strides, offset: into.offset });
  const n = params.u32(x.size);
  const target = dv === undefined ? "i" : `view_at(${dv}u, i)`;
  return elementwiseProgram({
    name: into === undefined ? "copy" : "copy-into",
    cacheKey: into === undefined ? "copy-u32" : "copy-into-u32",
    params,
    count: n,
    bindings: WORD_BINDINGS,
    body: /* wgsl */ `  Y[${target}] = X[view_at(0u, i)];`,
    inputs: [x],
    output: out,
    size: x.size,
  });
}
