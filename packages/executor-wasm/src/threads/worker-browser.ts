/// <reference lib="dom" preserve="true" />
// The pool's worker entry in browsers (a module Worker; bundlers bundle it from the `new Worker(new URL(…))` in
// pool.ts): the init message arrives on the worker's global scope (serve.ts does the rest). No Node imports, no
// top-level await, so a bundler can emit it as one classic script too.
import type { WorkerInit } from "./control.js";
import { startWorker } from "./serve.js";

const scope = globalThis as unknown as {
  postMessage(m: unknown): void;
  addEventListener(t: "message", h: (e: MessageEvent) => void, o: { once: boolean }): void;
};
scope.addEventListener("message", (e) => startWorker(e.data as WorkerInit, (reply) => scope.postMessage(reply)), {
  once: true,
});
