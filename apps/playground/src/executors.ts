// The executor picker's entries. Each says whether it can run here (true, or the reason it cannot, in words) and
// creates its executor once per page (and fresh ones for the executor diff). cpu runs everywhere; wasm and webgpu are
// imported dynamically (separate chunks), and each is tried once when the page opens so the picker can say plainly
// which ones work in this browser.
import type { Executor } from "@attngraph/graph";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { ExecutorUnavailableError, type ExecutorEntry } from "./executor-entry.js";
// Both flavours' URLs (Vite emits the files as assets); the executor fetches the one the browser validates.
import wasmRelaxedUrl from "@attngraph/executor-wasm/wasm/attngraph-relaxed.wasm?url";
import wasmSimdUrl from "@attngraph/executor-wasm/wasm/attngraph-simd.wasm?url";

export { ExecutorUnavailableError, type ExecutorEntry } from "./executor-entry.js";

function once<T>(make: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => {
    p ??= make();
    p.catch(() => (p = undefined)); // a failed start may be retried (the next pick calls make() again)
    return p;
  };
}

const cpu: ExecutorEntry = {
  name: "cpu",
  available: async () => true,
  create: once(async () => createCpuExecutor()),
  fresh: async () => createCpuExecutor(),
};

interface GpuLike {
  requestAdapter(): Promise<unknown>;
}

/** WebGPU needs `navigator.gpu` and an adapter; asking for one never throws here. */
async function webGpuAdapterReason(): Promise<true | string> {
  const gpu = (globalThis.navigator as { gpu?: GpuLike } | undefined)?.gpu;
  if (!gpu) return "navigator.gpu is missing: this browser has no WebGPU";
  try {
    return (await gpu.requestAdapter()) ? true : "navigator.gpu has no adapter";
  } catch (e) {
    return `requesting a WebGPU adapter failed: ${e instanceof Error ? e.message : String(e)}`;
  }
}

/**
 * An entry whose package is imported on first use. `available()` really starts the executor (import, construct,
 * init: the wasm module is fetched and compiled, the GPU device requested), so "available" means it ran its setup here,
 * and a failure anywhere becomes the reason shown on the page.
 */
function lazyEntry(name: string, precheck: () => Promise<true | string>, load: () => Promise<Executor>): ExecutorEntry {
  const fresh = async () => {
    const executor = await load();
    await executor.init?.();
    return executor;
  };
  const create = once(fresh);
  const available = once(async (): Promise<true | string> => {
    const pre = await precheck();
    if (pre !== true) return pre;
    try {
      await create();
      return true;
    } catch (e) {
      return `starting it failed: ${e instanceof Error ? e.message : String(e)}`;
    }
  });
  return { name, available, create, fresh };
}

const wasm = lazyEntry(
  "wasm",
  async () => (typeof WebAssembly === "object" ? true : "this browser has no WebAssembly"),
  // The module URLs are passed in: the package's own `new URL(…${flavour}…, import.meta.url)` lookup does not survive
  // a Vite build (see vite.config.ts).
  async () =>
    (await import("@attngraph/executor-wasm")).createWasmExecutor({
      sources: { relaxed: new URL(wasmRelaxedUrl, document.baseURI), simd: new URL(wasmSimdUrl, document.baseURI) },
    }),
);

const webgpu = lazyEntry("webgpu", webGpuAdapterReason, async () =>
  (await import("@attngraph/executor-webgpu")).createWebGpuExecutor(),
);

/** Every entry, in the picker's order. */
export const executorEntries: readonly ExecutorEntry[] = [cpu, wasm, webgpu];

export function executorEntry(name: string): ExecutorEntry {
  const e = executorEntries.find((x) => x.name === name);
  if (!e)
    throw new ExecutorUnavailableError(
      name,
      `unknown executor; the page knows ${executorEntries.map((x) => x.name).join(", ")}`,
    );
  return e;
}

/**
 * The executors a run compiles with: the picked one first, then cpu, so an op the picked executor lacks falls back to
 * cpu and the graph view shows where each node went (as explain() does).
 */
export async function executorsFor(name: string): Promise<Executor[]> {
  const entry = executorEntry(name);
  const ok = await entry.available();
  if (ok !== true) throw new ExecutorUnavailableError(name, ok);
  const picked = await entry.create();
  return name === "cpu" ? [picked] : [picked, await cpu.create()];
}
