// Small helpers shared by package tests (`@attngraph/testkit/test-helpers`). Needs vitest (a peer dependency).
import { expect } from "vitest";
import { AttnGraphError, compare, type Tensor } from "@attngraph/tensor";

/** Runs `fn` and returns the subject of the AttnGraphError it throws (failing the test if it throws anything else), or undefined if it returns. */
export const thrownSubject = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (e) {
    expect(AttnGraphError.isInstance(e)).toBe(true);
    return (e as AttnGraphError).subject;
  }
  return undefined;
};

/** Runs `f` and returns the AttnGraphError it throws; fails the test if it throws anything else or nothing. */
export const thrownError = (f: () => unknown): AttnGraphError => {
  try {
    f();
  } catch (e) {
    expect(AttnGraphError.isInstance(e), String(e)).toBe(true);
    return e as AttnGraphError;
  }
  return expect.unreachable("no error") as never;
};

/** Expects `got` to match `want` within compare's default tolerance, reporting the worst element if not. */
export const expectNear = (got: Tensor, want: ArrayLike<number>) => {
  const r = compare(got, want);
  expect(r.ok, JSON.stringify(r.worst)).toBe(true);
};
export { expectAdamLoop, expectSgdLoop, type LoopExecutor } from "./contract/optim-loop-checks.js";
export {
  expectAdamMomentErrors,
  expectAdamStepErrors,
  expectSgdMomentumErrors,
  expectSgdStepErrors,
  failingCallOf,
  type FailingCall,
  type HostDispatch,
} from "./contract/optim-error-checks.js";
export { itRunsGoldenCases } from "./golden/kernel-chain-checks.js";
export {
  expectAdamMomentScalarAndEmpty,
  expectSgdMomentumScalarAndEmpty,
  expectSgdStepScalarAndEmpty,
} from "./contract/optim-edge-checks.js";
