// What a WebGPU kernel is and what it gets besides its call (memory, views, program runs on the current device), and
// the executor's options and counters.
import type { KernelCall } from "@attngraph/graph";
import type { AnyTensor, DType, Shape } from "@attngraph/tensor";
import type { DeviceOptions } from "./device.js";
import type { GpuTensor } from "./gpu-tensor.js";
import type { ProgramInfo } from "./program.js";

/** What a kernel gets besides its call: memory, views and program runs on the executor's current device. */
export interface KernelContext {
  readonly device: GPUDevice;
  /** A new dense row-major tensor of `shape` (pooled memory, garbage contents); float32 unless told. */
  alloc(shape: Shape, dtype?: DType): GpuTensor;
  /** A view sharing `t`'s memory. */
  view(t: GpuTensor, shape: Shape, strides?: readonly number[], offset?: number): GpuTensor;
  /** Encodes and submits one program; resolves once it is queued. */
  run(info: ProgramInfo): Promise<void>;
  /** `t` as a dense tensor: `t` itself (a new view) when already dense, else a copy. */
  contiguous(t: GpuTensor): Promise<GpuTensor>;
  /**
   * Host values of `t`, of its dtype: the uploaded tensor when `t` came from `upload` untouched, else a readback
   * (counted).
   */
  hostValues(t: GpuTensor): Promise<AnyTensor>;
  /** A small read-only buffer of constants (slopes, rotary tables), cached by `key` (the MAX_CONSTANTS last used). */
  constants(key: string, make: () => Float32Array): GPUBuffer;
  /** Gives back a temporary the kernel made and does not return. */
  release(t: GpuTensor): void;
}

/**
 * A WebGPU kernel: reads `call.inputs` (never writing them, but for kv-append's cache, which it writes in place and
 * whose storage then drops its host tensor) and returns a value of shape `call.outShape` (new, or a view).
 */
export type WebGpuKernel = (call: KernelCall<GpuTensor>, gpu: KernelContext) => GpuTensor | Promise<GpuTensor>;

export interface WebGpuExecutorOptions extends DeviceOptions {
  /** Use this device instead of requesting one. If it is lost, the executor requests its own. */
  readonly device?: GPUDevice;
}

/** Counters for tests and benchmarks. */
export interface WebGpuStats {
  /** Buffers mapped back to the host (one per download, and per host check of a computed value). */
  readbacks: number;
  uploads: number;
  dispatches: number;
  /** Devices acquired (1 + re-creations after a loss). */
  devices: number;
}
