// The pool's worker entry in Node (worker_threads): the init message arrives on parentPort (serve.ts does the rest).
import { parentPort } from "node:worker_threads";
import type { WorkerInit } from "./control.js";
import { startWorker } from "./serve.js";

if (parentPort === null) throw new Error("attngraph wasm worker: not started as a worker thread");
const port = parentPort;
port.once("message", (init: WorkerInit) => startWorker(init, (reply) => port.postMessage(reply)));
