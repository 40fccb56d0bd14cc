// What the page knows of an executor it can offer: its picker entry, and the error for one that cannot run here. Apart
// from executors.ts (which imports the wasm modules' URLs and the packages), so code that only takes entries, like the
// executor diff, can be tested in Node with entries of its own.
import type { Executor } from "@attngraph/graph";

export interface ExecutorEntry {
  readonly name: string;
  /** `true`, or why this executor cannot run on this page ("navigator.gpu is missing"). Never throws. */
  available(): Promise<true | string>;
  /** The executor (one per page, created on first use). Only call after `available()` said true. */
  create(): Promise<Executor>;
  /**
   * A new executor of this kind, set up and shared with nothing: the page's runs keep using `create()`'s. Its owner
   * disposes it. Only call after `available()` said true.
   */
  fresh(): Promise<Executor>;
}

/** An executor the user picked that cannot run here; its message is what the page shows. */
export class ExecutorUnavailableError extends Error {
  constructor(name: string, reason: string) {
    super(`${name}: not available here (${reason})`);
    this.name = "ExecutorUnavailableError";
  }
}
