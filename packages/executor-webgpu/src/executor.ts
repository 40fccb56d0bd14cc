// The WebGPU executor: values are GPU buffers seen through strided views (GpuTensor), kernels encode WGSL programs.
// What this file owns, and why:
// - The device: requested in init() (or given by the user), never at construction. A lost device fails the run that
//   notices it (an AttnGraphError with code "device-lost"); the next call requests a new device, and values that came
//   from `upload` are re-uploaded from their host tensor on first use, so a session's cached weights keep working.
// - Memory: buffers come from a pool and go back when the last view of them is released.
// - Errors: every dispatch runs inside validation and out-of-memory error scopes, and one is reported naming the node.
//   Dispatches are serialised, because error scopes are a per-device stack that interleaved runs would mix up.
// - Readback: only `download` maps memory back (the runtime downloads outputs and watched nodes only); `stats`
//   counts it, so tests can prove that nothing else is read.
import {
  AttnGraphError,
  Tensor,
  UnsupportedError,
  contiguousStrides,
  describe,
  formatShape,
  sameShape,
  sizeOf,
  type AnyTensor,
  type DType,
} from "@attngraph/tensor";
import type { Executor, KernelCall, Support } from "@attngraph/graph";
import { KernelTable, checkCall } from "@attngraph/graph";
import { BufferPool, MAP_READ_MODE, READBACK_USAGE, STORAGE_USAGE, UNIFORM_USAGE } from "./buffers.js";
import { sharedDevice } from "./device.js";
import { GpuTensor, isGpuTensor, type GpuStorage } from "./gpu-tensor.js";
import { pipelineFor, type ProgramInfo } from "./program.js";
import { copyProgram } from "./kernels/copy.wgsl.js";
import { expectGpuValues } from "./kernels/inputs.js";
import { PARAM_WORDS } from "./kernels/shared.wgsl.js";
import type { KernelContext, WebGpuExecutorOptions, WebGpuKernel, WebGpuStats } from "./kernel-context.js";
import { deviceLost, disposedError, firstLine } from "./device-errors.js";
import { constantBuffer } from "./constant-buffers.js";

export type { KernelContext, WebGpuExecutorOptions, WebGpuKernel, WebGpuStats } from "./kernel-context.js";
export { isDeviceLost } from "./device-errors.js";

const EXECUTOR = "webgpu";

interface DeviceState {
  readonly device: GPUDevice;
  readonly description: string;
  readonly pool: BufferPool;
  readonly constants: Map<string, GPUBuffer>;
  lost: GPUDeviceLostInfo | { reason: string; message: string } | undefined;
  /** Whether a failed call already told the caller about the loss (the next call then re-creates the device). */
  reported: boolean;
}

export class WebGpuExecutor implements Executor<GpuTensor> {
  readonly specVersion = 1 as const;
  readonly name = EXECUTOR;
  /** download() copies out of a mapped readback buffer: the runtime need not copy its dense results again. */
  readonly downloadsCopy = true;
  readonly stats: WebGpuStats = { readbacks: 0, uploads: 0, dispatches: 0, devices: 0 };
  readonly #kernels = new KernelTable<WebGpuKernel>(EXECUTOR, "(call, gpu) => GpuTensor");
  readonly #options: WebGpuExecutorOptions;
  #userDevice: GPUDevice | undefined;
  #state: DeviceState | undefined;
  #acquiring: Promise<DeviceState> | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  #disposed = false;

  constructor(options: WebGpuExecutorOptions = {}) {
    this.#options = options;
    this.#userDevice = options.device;
  }

  registerKernel(kind: string, kernel: WebGpuKernel): void {
    this.#kernels.register(kind, kernel);
  }

  /** Never throws, needs no device: whether a kernel is registered. A missing adapter is init()'s error. */
  supports(kind: string, _attrs: Readonly<Record<string, unknown>>): Support {
    return this.#kernels.supports(kind);
  }

  /**
   * Requests the device (or adopts the user's). No adapter → AttnGraphError "no-adapter" saying what to install.
   * dispose() wins whenever it comes: an init() still waiting for its device rejects with the "disposed" error (the
   * device that arrives later is not kept), and so does init() after dispose().
   */
  async init(): Promise<void> {
    await this.#device();
  }

  /** The device in use, after init(). */
  get device(): GPUDevice | undefined {
    return this.#state?.device;
  }

  /** GPU buffers of the current device held by live values (uploads, results, scratch of a dispatch in progress). */
  get buffersInUse(): number {
    return this.#state?.pool.inUse ?? 0;
  }

  /** GPU buffers created on the current device so far (pooled ones are reused, so this stops growing across runs). */
  get bufferCount(): number {
    return this.#state?.pool.created ?? 0;
  }

  /** Which adapter the device came from, after init(). */
  get adapterDescription(): string | undefined {
    return this.#state?.description;
  }

  /** float32 data as f32, int32 data (ids, targets) as i32: the bits of the host tensor, never converted. */
  async upload(tensor: AnyTensor): Promise<GpuTensor> {
    const s = await this.#device();
    const data = hostData(tensor);
    const storage = this.#allocate(s, data.length, tensor.dtype, tensor);
    this.#write(s, storage, data);
    return new GpuTensor(storage, tensor.shape, contiguousStrides(tensor.shape), 0);
  }

  /**
   * The value on the host, of its dtype. Every kernel result is float32; an int32 value (an uploaded id tensor, or a
   * view of one) comes back as a Tensor<"int32">, never as its bits read as floats. The cast: the contract declares
   * `download` as returning a float32 Tensor, because the runtime downloads only op outputs.
   */
  async download(value: GpuTensor): Promise<Tensor> {
    if (!isGpuTensor(value))
      throw new AttnGraphError("input", describe("download", "not a webgpu value", "a GpuTensor", typeof value));
    const s = await this.#device();
    await this.#live(s, value);
    return (await this.#readback(s, value)) as Tensor;
  }

  dispatch(call: KernelCall<GpuTensor>): Promise<GpuTensor> {
    // Serialised: error scopes are one stack per device.
    const run = this.#queue.then(() => this.#dispatch(call));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  release(value: GpuTensor): void {
    if (!isGpuTensor(value) || !value.drop()) return;
    const st = value.storage;
    st.host = undefined;
    const s = this.#state;
    if (s && st.device === s.device && !s.lost) s.pool.give(st.buffer);
  }

  /** Frees the executor's buffers; a pending init() rejects (see init()), and every later use fails with "disposed". */
  async dispose(): Promise<void> {
    this.#disposed = true;
    await this.#queue;
    const s = this.#state;
    this.#state = undefined;
    if (s) {
      s.pool.destroy();
      for (const b of s.constants.values()) b.destroy();
    }
  }

  async #dispatch(given: KernelCall<GpuTensor>): Promise<GpuTensor> {
    const kernel = this.#kernels.get(given.kind);
    if (kernel === undefined)
      throw new UnsupportedError(`op ${given.kind} on executor ${EXECUTOR}`, { subject: given.node });
    expectGpuValues(given);
    const s = await this.#device();
    for (const v of given.inputs) if (isGpuTensor(v)) await this.#live(s, v);
    const call = checkCall(given);
    this.stats.dispatches++;
    const { device } = s;
    device.pushErrorScope("out-of-memory");
    device.pushErrorScope("validation");
    let out: GpuTensor | undefined;
    let thrown: unknown;
    try {
      out = await kernel(call, this.#context(s, call));
    } catch (e) {
      thrown = e;
    }
    const validation = await device.popErrorScope();
    const oom = await device.popErrorScope();
    this.#checkLost(s, call.node);
    const gpuError = validation ?? oom;
    if (gpuError) {
      if (out) this.release(out);
      const code = oom && !validation ? "webgpu-out-of-memory" : "webgpu-validation";
      const what = `WebGPU ${code === "webgpu-validation" ? "validation" : "out-of-memory"} error in op ${call.kind}`;
      throw new AttnGraphError(code, describe(call.node, what, undefined, firstLine(gpuError.message)), {
        subject: call.node,
        got: gpuError.message,
        cause: thrown ?? gpuError,
      });
    }
    if (thrown !== undefined) throw thrown;
    if (!isGpuTensor(out) || !sameShape(out.shape, call.outShape)) {
      const expected = formatShape(call.outShape);
      const got = isGpuTensor(out) ? formatShape(out.shape) : "something that is not a GpuTensor";
      throw new AttnGraphError(
        "kernel-output",
        describe(
          call.node,
          `kernel for op ${call.kind} on executor ${EXECUTOR} returned the wrong shape`,
          expected,
          got,
        ),
        {
          subject: call.node,
          expected,
          got,
        },
      );
    }
    return out;
  }

  #context(s: DeviceState, call: KernelCall<GpuTensor>): KernelContext {
    const ctx: KernelContext = {
      device: s.device,
      alloc: (shape, dtype = "float32") =>
        new GpuTensor(this.#allocate(s, sizeOf(shape), dtype, undefined), shape, contiguousStrides(shape), 0),
      view: (t, shape, strides = contiguousStrides(shape), offset = t.offset) =>
        new GpuTensor(t.storage, shape, strides, offset),
      run: (info) => this.#run(s, call.node, info),
      contiguous: async (t) => {
        if (t.isContiguous) return ctx.view(t, t.shape, t.strides, t.offset);
        const out = ctx.alloc(t.shape, t.dtype);
        await ctx.run(copyProgram(t, out));
        return out;
      },
      hostValues: async (t) => {
        const host = t.storage.host;
        // An untouched upload: the host tensor is the truth, no readback needed.
        if (host && t.offset === 0 && sameShape(host.shape, t.shape) && t.isContiguous) return host;
        return this.#readback(s, t);
      },
      constants: (key, make) => constantBuffer(s, key, make),
      release: (t) => this.release(t),
    };
    return ctx;
  }

  async #run(s: DeviceState, node: string, info: ProgramInfo): Promise<void> {
    const [x, y, z] = info.workgroups;
    if (x * y * z === 0) return;
    let pipeline: GPUComputePipeline;
    try {
      pipeline = await pipelineFor(s.device, info);
    } catch (e) {
      throw new AttnGraphError(
        "webgpu-validation",
        describe(node, `WGSL program ${info.cacheKey} failed to compile`, undefined, firstLine((e as Error).message)),
        {
          subject: node,
          cause: e,
        },
      );
    }
    const uniform = s.pool.acquire(PARAM_WORDS * 4, UNIFORM_USAGE);
    s.device.queue.writeBuffer(uniform, 0, info.params.words);
    const entries: GPUBindGroupEntry[] = [{ binding: 0, resource: { buffer: uniform } }];
    info.inputs.forEach((v, i) =>
      entries.push({ binding: i + 1, resource: { buffer: isGpuTensor(v) ? v.storage.buffer : v } }),
    );
    entries.push({ binding: info.inputs.length + 1, resource: { buffer: info.output.storage.buffer } });
    const bindGroup = s.device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries });
    const encoder = s.device.createCommandEncoder({ label: node });
    const pass = encoder.beginComputePass({ label: `${node} (${info.name})` });
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bindGroup);
    pass.dispatchWorkgroups(x, y, z);
    pass.end();
    s.device.queue.submit([encoder.finish()]);
    // Queue order makes the uniform safe to rewrite for the next program right away.
    s.pool.give(uniform);
  }

  async #readback(s: DeviceState, t: GpuTensor): Promise<AnyTensor> {
    // Copy the span the view reaches (dense views: exactly their elements), then rebuild the view on the host.
    const first = t.offset;
    let last = t.offset;
    for (let i = 0; i < t.rank; i++) last += Math.max(0, t.shape[i]! - 1) * t.strides[i]!;
    const int = t.dtype === "int32";
    if (t.size === 0)
      return int ? new Tensor<"int32">(new Int32Array(0), t.shape) : new Tensor(new Float32Array(0), t.shape);
    const count = last - first + 1;
    const bytes = count * 4;
    const staging = s.pool.acquire(bytes, READBACK_USAGE);
    const encoder = s.device.createCommandEncoder({ label: "readback" });
    encoder.copyBufferToBuffer(t.storage.buffer, first * 4, staging, 0, bytes);
    s.device.queue.submit([encoder.finish()]);
    this.stats.readbacks++;
    try {
      await staging.mapAsync(MAP_READ_MODE, 0, bytes);
    } catch (e) {
      this.#checkLost(s, "download", e);
      throw new AttnGraphError(
        "webgpu-readback",
        describe("download", "mapping the readback buffer failed", undefined, (e as Error).message),
        { cause: e },
      );
    }
    const bits = staging.getMappedRange(0, bytes).slice(0);
    staging.unmap();
    s.pool.give(staging);
    return int
      ? new Tensor<"int32">(new Int32Array(bits), t.shape, t.strides, t.offset - first)
      : new Tensor(new Float32Array(bits), t.shape, t.strides, t.offset - first);
  }

  /** Makes a value usable on the current device: an upload from before a device loss is uploaded again. */
  async #live(s: DeviceState, t: GpuTensor): Promise<void> {
    const st = t.storage;
    if (st.device === s.device) return;
    if (!st.host) {
      throw new AttnGraphError(
        "device-lost",
        describe(
          "webgpu",
          "this value was computed on a device that was lost since",
          "a value from the current device",
          "a stale value",
        ),
        {
          subject: "webgpu",
        },
      );
    }
    const data = hostData(st.host);
    st.buffer = s.pool.acquire(Math.max(16, data.byteLength), STORAGE_USAGE);
    st.device = s.device;
    s.device.queue.writeBuffer(st.buffer, 0, data);
    this.stats.uploads++;
  }

  #allocate(s: DeviceState, elements: number, dtype: DType, host: AnyTensor | undefined): GpuStorage {
    const bytes = Math.max(16, elements * 4);
    return { buffer: s.pool.acquire(bytes, STORAGE_USAGE), device: s.device, bytes, refs: 0, dtype, host };
  }

  #write(s: DeviceState, storage: GpuStorage, data: Float32Array | Int32Array): void {
    if (data.length > 0) s.device.queue.writeBuffer(storage.buffer, 0, data);
    this.stats.uploads++;
  }

  /** Throws the loss once (failing the run that notices it); the call after that gets a new device. */
  #checkLost(s: DeviceState, subject: string, cause?: unknown): void {
    if (!s.lost || s.reported) return;
    s.reported = true;
    throw deviceLost(subject, s.lost, cause);
  }

  async #device(): Promise<DeviceState> {
    if (this.#disposed) throw disposedError();
    const s = this.#state;
    if (s && !s.lost) return s;
    if (s && !s.reported) {
      s.reported = true;
      throw deviceLost(`executor ${EXECUTOR}`, s.lost!);
    }
    if (s) {
      // Lost and reported: start over on a new device. The user's device cannot come back, so request our own.
      this.#state = undefined;
      if (s.device === this.#userDevice) this.#userDevice = undefined;
    }
    this.#acquiring ??= this.#acquire().finally(() => (this.#acquiring = undefined));
    return this.#acquiring;
  }

  async #acquire(): Promise<DeviceState> {
    const { device, description } = this.#userDevice
      ? { device: this.#userDevice, description: "user device" }
      : await sharedDevice(this.#options);
    // dispose() came while the device was requested: keeping it now would undo the dispose (init() resolving, a state
    // that nothing frees).
    if (this.#disposed) throw disposedError();
    const state: DeviceState = {
      device,
      description,
      pool: new BufferPool(device),
      constants: new Map(),
      lost: undefined,
      reported: false,
    };
    void device.lost.then((info) => {
      if (info.reason === "destroyed" && this.#state !== state) return; // our own dispose
      state.lost = info;
    });
    this.stats.devices++;
    this.#state = state;
    return state;
  }
}

/** A host tensor's elements, dense row-major, in its own element type (both are 4 bytes per element). */
function hostData(t: AnyTensor): Float32Array | Int32Array {
  return t.dtype === "int32" ? t.toInt32Array() : t.toFloat32Array();
}
