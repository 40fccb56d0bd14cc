import type { Executor } from "@attngraph/graph";
import type { Harness } from "./harness.js";

/** What each group of checks gets: the suite's executor (set up in beforeAll) and a way to make a fresh one. */
export interface ContractContext {
  /** The shared executor; read it inside a test, not while the suite is being collected. */
  readonly h: Harness;
  /** A new executor from the suite's factory, initialised, for tests that change an executor's state. */
  // biome-ignore lint/suspicious/noExplicitAny: any executor, whatever its value type
  fresh(): Promise<Executor<any>>;
}
