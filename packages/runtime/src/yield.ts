// Kernels on the cpu executor are synchronous, so a run never lets timers or abort handlers fire unless it yields to the
// macrotask queue. A run with an AbortSignal yields between steps so that `controller.abort()` from a timer or an event
// handler is seen promptly. setImmediate where it exists (Node), else a MessageChannel (browsers; not clamped like
// setTimeout).
export function yieldToEventLoop(): Promise<void> {
  const g = globalThis as { setImmediate?: (fn: () => void) => unknown };
  if (typeof g.setImmediate === "function") return new Promise((resolve) => g.setImmediate!(resolve));
  return new Promise((resolve) => {
    // Typed loosely: @types/node's MessagePort is the worker_threads one, browsers have the DOM one.
    const ch = new MessageChannel() as unknown as { port1: { onmessage: (() => void) | null; close(): void }; port2: { postMessage(m: unknown): void } };
    ch.port1.onmessage = () => {
      ch.port1.close();
      resolve();
    };
    ch.port2.postMessage(null);
  });
}
