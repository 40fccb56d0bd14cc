// WebGPU for the peers that take it from `navigator.gpu` as in a browser (onnxruntime-web's WebGPU execution provider,
// @tensorflow/tfjs-backend-webgpu): in Node, the `webgpu` package (Dawn, the binding the attngraph `webgpu` executor
// loads) installed as `globalThis.navigator.gpu`, with WebGPU's globals (GPUBufferUsage, GPUMapMode, …). Without a GPU,
// Dawn finds SwiftShader (a CPU Vulkan driver) through VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json; the
// rows of such a software adapter check correctness only (see `describeAdapter`).

import { adapterName, type AdapterInfoLike as AdapterName } from "@attngraph/executor-webgpu";

/** The WebGPU adapter a row ran on, for the report: named, and whether its times are GPU figures. */
export interface GpuAdapter {
  /** e.g. "google swiftshader (SwiftShader driver 5.0.0)", "nvidia-h200 (NVIDIA: 580.159.04 580.159.4.0)". */
  readonly name: string;
  /**
   * Set for a software adapter (SwiftShader, llvmpipe, a fallback adapter): what it is, e.g. "SwiftShader, software".
   * Such a row's output is checked like any other, but its times are a CPU emulating a GPU, not a GPU figure: the
   * report leaves them out. Undefined for a hardware adapter.
   */
  readonly software?: string;
}

/** What the bench reads of a GPUAdapterInfo (`adapter.info`, `device.adapterInfo`). */
export interface AdapterInfoLike extends AdapterName {
  readonly isFallbackAdapter?: boolean;
}

/** The error when neither a GPU nor SwiftShader is found: what to set (fits the report's 160-character reason). */
export const NO_ADAPTER_HINT =
  "no WebGPU adapter: without a GPU, set VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json (SwiftShader, from `pnpm setup:system`)";

const SOFTWARE: readonly (readonly [RegExp, string])[] = [
  [/swiftshader/i, "SwiftShader"],
  [/llvmpipe|lavapipe/i, "llvmpipe"],
  [/softpipe/i, "softpipe"],
  [/microsoft basic render|\bwarp\b/i, "WARP"],
];

/** The adapter's name and, for a software one, what it is (see GpuAdapter). */
export function describeAdapter(info: AdapterInfoLike | undefined): GpuAdapter {
  const name = adapterName(info);
  const text = [info?.vendor, info?.architecture, info?.device, info?.description].join(" ");
  const kind =
    SOFTWARE.find(([re]) => re.test(text))?.[1] ?? (info?.isFallbackAdapter ? "fallback adapter" : undefined);
  return kind === undefined ? { name } : { name, software: `${kind}, software` };
}

// Module-level on purpose: dawn.node aborts the process if the object `create()` returned is collected while a device
// made from it is alive (packages/executor-webgpu/src/device.ts says the same).
let installed: Promise<GPU> | undefined;

/**
 * `navigator.gpu`: the browser's, or in Node the `webgpu` package's `create([])`, installed once per process on
 * `globalThis.navigator` together with WebGPU's globals (only those not already defined), before anything that looks
 * for them is imported (tfjs-backend-webgpu registers its backend only if `navigator.gpu` exists when it loads).
 */
export function navigatorGpu(): Promise<GPU> {
  installed ??= install();
  return installed;
}

async function install(): Promise<GPU> {
  const g = globalThis as { navigator?: { gpu?: GPU } };
  if (g.navigator?.gpu) return g.navigator.gpu;
  const { create, globals } = await import("webgpu");
  for (const [name, value] of Object.entries(globals as Record<string, unknown>)) {
    if (!(name in globalThis)) Object.defineProperty(globalThis, name, { value, writable: true, configurable: true });
  }
  copySharedWrites((globals as { GPUQueue?: { prototype: GPUQueue } }).GPUQueue?.prototype);
  const gpu = create([]);
  // Node 21+ has a `navigator` (without `gpu`); Node 20 has none.
  if (g.navigator) Object.defineProperty(g.navigator, "gpu", { value: gpu, configurable: true });
  else Object.defineProperty(globalThis, "navigator", { value: { gpu }, writable: true, configurable: true });
  return gpu;
}

/**
 * dawn.node's `queue.writeBuffer` takes no view of a SharedArrayBuffer: it throws "Invalid argument" or crashes the
 * process. onnxruntime-web's wasm memory is shared (its threaded build, whatever `numThreads`), and its WebGPU EP
 * uploads straight from it, so such a write goes through a copy of the same bytes; every other write is untouched.
 */
function copySharedWrites(queue: GPUQueue | undefined): void {
  if (!queue || typeof SharedArrayBuffer === "undefined") return;
  const write = queue.writeBuffer as (this: GPUQueue, ...args: unknown[]) => undefined;
  const unshared = (data: unknown): unknown => {
    if (data instanceof SharedArrayBuffer) return new Uint8Array(data).slice().buffer;
    if (ArrayBuffer.isView(data) && data.buffer instanceof SharedArrayBuffer) {
      // A typed array keeps its type and length (writeBuffer counts its dataOffset and size in elements).
      if (data instanceof DataView)
        return new DataView(new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice().buffer);
      return (data as unknown as { slice(): unknown }).slice();
    }
    return data;
  };
  Object.defineProperty(queue, "writeBuffer", {
    value: function writeBuffer(this: GPUQueue, buffer: unknown, offset: unknown, data: unknown, ...rest: unknown[]) {
      return write.call(this, buffer, offset, unshared(data), ...rest);
    },
    writable: true,
    configurable: true,
  });
}

/**
 * The adapter `navigator.gpu` (or `gpu`, for tests) gives by default, described; throws NO_ADAPTER_HINT when there is
 * none, which the bench prints as the peer's "unavailable" row.
 */
export async function defaultAdapter(
  gpu?: Pick<GPU, "requestAdapter">,
): Promise<{ readonly adapter: GPUAdapter; readonly described: GpuAdapter }> {
  const adapter = await (gpu ?? (await navigatorGpu())).requestAdapter();
  if (!adapter) throw new Error(NO_ADAPTER_HINT);
  return { adapter, described: describeAdapter(adapterInfo(adapter)) };
}

/** A device's or adapter's GPUAdapterInfo (`device.adapterInfo`, `adapter.info`), where the binding has one. */
export function adapterInfo(of: GPUDevice | GPUAdapter | undefined): AdapterInfoLike | undefined {
  const o = of as { adapterInfo?: AdapterInfoLike; info?: AdapterInfoLike } | undefined;
  return o?.adapterInfo ?? o?.info;
}

/**
 * Holds Node's event loop open until the returned function is called. dawn.node settles its promises (pipelines made
 * with createComputePipelineAsync, mapAsync) without a libuv handle of its own; with none from anyone else, Node takes
 * the loop for idle and first waits for V8's background work to finish. Measured here: onnxruntime-web's first WebGPU
 * run took 55–85 s that way (V8 optimising its 27 MB wasm module on 2 cores) and about 5 s with this handle held. The timer
 * never fires.
 */
export function holdEventLoop(): () => void {
  const timer = setInterval(() => undefined, 2 ** 30);
  return () => clearInterval(timer);
}
