// A program is what a WGSL kernel file produces for one call: its variant key, its code, its params and bindings, and
// the workgroup grid. Every kernel file builds one in the same four steps (validate → attrs + cacheKey → program info
// → entry, as ONNX Runtime Web's WebGPU kernels do); `KernelContext.run` turns it into a pipeline and a dispatch.
import type { GpuTensor } from "./gpu-tensor.js";
import type { Params } from "./kernels/shared.wgsl.js";

export interface ProgramInfo {
  /** For labels and errors, e.g. "softmax". */
  readonly name: string;
  /** Identifies the WGSL variant for a given params layout (see Params.layout); pipelines are cached by both. */
  readonly cacheKey: string;
  /** The WGSL source, built only on a cache miss. Entry point `main`. */
  readonly code: () => string;
  readonly params: Params;
  /** Read-only storage bindings 1..n, in the order the code declares them. */
  readonly inputs: readonly (GpuTensor | GPUBuffer)[];
  /** The read_write binding after the inputs. */
  readonly output: GpuTensor;
  readonly workgroups: readonly [number, number, number];
}

/** Pipelines per device, shared by every executor on that device (the conformance runner makes one per case). */
const pipelines = new WeakMap<GPUDevice, Map<string, Promise<GPUComputePipeline>>>();

export function pipelineFor(device: GPUDevice, info: ProgramInfo): Promise<GPUComputePipeline> {
  let cache = pipelines.get(device);
  if (!cache) pipelines.set(device, (cache = new Map()));
  // The params layout is part of the key: word positions are baked into the code and move with the views' ranks.
  const key = `${info.cacheKey}|${info.params.layout}`;
  let p = cache.get(key);
  if (!p) {
    const module = device.createShaderModule({ code: info.code(), label: key });
    p = device.createComputePipelineAsync({ layout: "auto", compute: { module, entryPoint: "main" }, label: key });
    // A failed compile must not stay cached: the next call retries (and reports) instead of reusing a rejection.
    p.catch(() => cache.get(key) === p && cache.delete(key));
    cache.set(key, p);
  }
  return p;
}
