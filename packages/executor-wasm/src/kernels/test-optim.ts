// How the optimizer kernels' training-loop tests (adam-step, sgd-step) keep their values on wasm for testkit's loop
// checks: uploaded with their own layout, released once no step reads them, nothing left allocated after.
import { expect } from "vitest";
import { valuesOf } from "@attngraph/testkit";
import type { LoopExecutor } from "@attngraph/testkit/test-helpers";
import type { WasmExecutor } from "../executor.js";
import { random, uploadView } from "../test-util.js";
import type { WasmValue } from "../value.js";

/** `ex` as a training loop's executor: a [4, 7] parameter (a row tail past the 4-lane path), the tests' own random. */
export const loopOn = (ex: WasmExecutor): LoopExecutor<WasmValue> => ({
  random,
  shape: [4, 7],
  ...valuesOf<WasmValue>(ex, (t) => uploadView(ex, t)),
});

/** Runs `loop` on `ex` and expects it to leave nothing allocated. */
export function expectLoopReleased(ex: WasmExecutor, loop: () => void): void {
  const before = ex.inUseBytes;
  loop();
  expect(ex.inUseBytes).toBe(before);
}
