// A kernel that works in chunks must give the event loop a turn between them: on one thread, `controller.abort()`
// from a timer or an event handler cannot run while a synchronous kernel holds the thread. setImmediate where it
// exists (Node: runs after pending I/O and timers), else a MessageChannel (browsers; not clamped like setTimeout).
// The runtime has its own copy (runtime/src/yield.ts): executors cannot import the runtime.
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
