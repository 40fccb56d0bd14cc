// Finding a GPUDevice: a browser's `navigator.gpu`, or in Node the `webgpu` package (Dawn), loaded lazily through a
// dynamic import so that browser bundles never pull it in. Nothing here runs at import time or at executor
// construction: detection happens in `init()`, and no adapter is one clear "webgpu: no adapter" error.
import { AttnGraphError } from "@attngraph/tensor";
import { adapterName, type AdapterInfoLike } from "./adapter-name.js";

/** What the `webgpu` npm package exports (or another binding with the same shape). */
export interface NodeBindings {
  create(flags: string[]): GPU;
}

export interface DeviceOptions {
  readonly adapterOptions?: GPURequestAdapterOptions;
  /** The Node binding to use instead of `import("webgpu")`. */
  readonly nodeBindings?: NodeBindings;
}

export interface Acquired {
  readonly device: GPUDevice;
  /** e.g. "google swiftshader (vulkan)", for messages and the bench. */
  readonly description: string;
}

// Module-level on purpose: dawn.node aborts the process if the object returned by `create()` is collected while a
// device made from it is still alive.
// Keyed by binding (a test may pass its own) and by flags.
const nodeGpus = new Map<NodeBindings, Map<string, GPU>>();

/** Limits the kernels need beyond WebGPU's defaults where the adapter has them (compatibility mode starts lower). */
const WANTED_LIMITS = [
  "maxStorageBuffersPerShaderStage",
  "maxComputeWorkgroupStorageSize",
  "maxStorageBufferBindingSize",
  "maxBufferSize",
] as const;

// One device per process and set of options, shared by every executor that did not bring its own: pipelines are cached
// per device, and the conformance runner makes a fresh executor per case. Dropped when the device is lost.
const shared = new Map<string, Promise<Acquired>>();

/** The shared device for these options (requested on first use); a lost one is replaced on the next call. */
export function sharedDevice(options: DeviceOptions = {}): Promise<Acquired> {
  const key = options.nodeBindings ? "" : JSON.stringify(options.adapterOptions ?? {});
  if (options.nodeBindings) return acquireDevice(options); // a custom binding: not shared
  let p = shared.get(key);
  if (!p) {
    p = acquireDevice(options);
    shared.set(key, p);
    p.then(
      (a) => void a.device.lost.then(() => shared.get(key) === p && shared.delete(key)),
      () => shared.get(key) === p && shared.delete(key),
    );
  }
  return p;
}

export async function acquireDevice(options: DeviceOptions = {}): Promise<Acquired> {
  const tried: string[] = [];
  const browserGpu = (globalThis as { navigator?: { gpu?: GPU } }).navigator?.gpu;
  if (browserGpu) {
    const adapter = await browserGpu.requestAdapter(options.adapterOptions);
    if (adapter) return open(adapter, "navigator.gpu");
    tried.push("navigator.gpu.requestAdapter() returned null");
    throw noAdapter(
      tried,
      "the browser exposes WebGPU but gave no adapter: enable hardware acceleration, or on Linux start Chromium with --enable-unsafe-webgpu --enable-features=Vulkan",
    );
  }
  if (!isNode()) {
    throw noAdapter(
      ["navigator.gpu is undefined"],
      "use a browser with WebGPU (Chrome/Edge 113+, Safari 26+, Firefox 141+), on https:// or http://localhost; on Linux Chromium needs --enable-unsafe-webgpu",
    );
  }
  const bindings = options.nodeBindings ?? (await loadNodeBindings(tried));
  if (!bindings)
    throw noAdapter(
      tried,
      "install the webgpu npm package, an optional peer dependency of @attngraph/executor-webgpu (npm install webgpu), or pass { device } to createWebGpuExecutor",
    );
  // Vulkan (or Metal/D3D12) first; a machine without a GPU can use SwiftShader through VK_ICD_FILENAMES.
  const primary = gpuFor(bindings, []);
  const adapter = await primary.requestAdapter(options.adapterOptions);
  if (adapter) return open(adapter, "webgpu (Dawn)");
  tried.push("Dawn found no Vulkan/Metal/D3D12 adapter");
  // Dawn's OpenGL ES backend (e.g. Mesa llvmpipe) in compatibility mode, when nothing else exists.
  process.env["EGL_PLATFORM"] ??= "surfaceless";
  try {
    const gl = gpuFor(bindings, ["backend=opengles"]);
    const glAdapter = await gl.requestAdapter({
      ...options.adapterOptions,
      featureLevel: "compatibility",
    } as GPURequestAdapterOptions);
    if (glAdapter) return open(glAdapter, "webgpu (Dawn, OpenGL ES)");
    tried.push("Dawn's OpenGL ES backend found no adapter");
  } catch (e) {
    tried.push(`Dawn's OpenGL ES backend failed: ${(e as Error).message}`);
  }
  throw noAdapter(
    tried,
    "install a GPU driver with Vulkan (and libvulkan1), or for a CPU adapter install Debian's chromium and libvulkan1 packages and set VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json",
  );
}

async function open(adapter: GPUAdapter, via: string): Promise<Acquired> {
  const requiredLimits: Record<string, number> = {};
  for (const name of WANTED_LIMITS) {
    const v = (adapter.limits as unknown as Record<string, number | undefined>)[name];
    if (typeof v === "number") requiredLimits[name] = v;
  }
  const device = await adapter.requestDevice({ requiredLimits, label: "attngraph" });
  const info = (adapter as { info?: AdapterInfoLike }).info; // older @webgpu/types lack it
  return { device, description: `${adapterName(info)} via ${via}` };
}

function gpuFor(bindings: NodeBindings, flags: string[]): GPU {
  let byFlags = nodeGpus.get(bindings);
  if (!byFlags) nodeGpus.set(bindings, (byFlags = new Map()));
  const key = flags.join(",");
  let gpu = byFlags.get(key);
  if (!gpu) byFlags.set(key, (gpu = bindings.create(flags)));
  return gpu;
}

async function loadNodeBindings(tried: string[]): Promise<NodeBindings | undefined> {
  // A variable specifier: bundlers leave it alone, so a browser build never tries to resolve the Node addon.
  const specifier = "webgpu";
  try {
    const mod = (await import(/* @vite-ignore */ specifier)) as Partial<NodeBindings>;
    if (typeof mod.create === "function") return mod as NodeBindings;
    tried.push("the webgpu package has no create()");
  } catch (e) {
    tried.push(`import("webgpu") failed: ${(e as Error).message.split("\n")[0]}`);
  }
  return undefined;
}

function isNode(): boolean {
  return typeof process !== "undefined" && typeof process.versions?.node === "string";
}

function noAdapter(tried: readonly string[], fix: string): AttnGraphError {
  return new AttnGraphError("no-adapter", `webgpu: no adapter (${tried.join("; ")}): ${fix}`, {
    subject: "executor webgpu",
    expected: "a WebGPU adapter",
    got: "none",
  });
}
