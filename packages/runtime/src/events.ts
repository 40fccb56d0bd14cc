import type { Shape, Tensor } from "@attngraph/tensor";
import type { Disagreement } from "./validate.js";

/** Everything a session reports, on `session.events$`. Times are `performance.now()` milliseconds. */
export type SessionEvent =
  | { readonly type: "run-start"; readonly runId: number; readonly time: number }
  | {
      readonly type: "node-start";
      readonly runId: number;
      readonly node: string;
      readonly kind: string;
      readonly executor: string;
      readonly time: number;
    }
  | {
      readonly type: "node-end";
      readonly runId: number;
      readonly node: string;
      readonly kind: string;
      readonly executor: string;
      readonly shape: Shape;
      /** Wall time of the dispatch (for async executors: until its result was ready). */
      readonly ms: number;
    }
  | { readonly type: "run-end"; readonly runId: number; readonly ms: number }
  | { readonly type: "run-error"; readonly runId: number; readonly node: string | undefined; readonly error: unknown }
  | { readonly type: "run-cancelled"; readonly runId: number; readonly node: string | undefined }
  | {
      /**
       * A tap subscriber fell more than `tapBuffer` events behind and lost its oldest pending event (of run `runId`,
       * node `node`). `dropped` counts every event that subscriber has lost so far.
       */
      readonly type: "tap-dropped";
      readonly runId: number;
      readonly node: string;
      readonly dropped: number;
    }
  | ({
      /** compile's validateWith in "warn" mode: node `node`'s result differs from the validator's (see Disagreement). */
      readonly type: "validation-mismatch";
      readonly runId: number;
    } & Disagreement);

/** One watched tensor of one run, as a tap delivers it. The tensor is a copy the subscriber owns. */
export interface TapEvent {
  readonly runId: number;
  readonly node: string;
  readonly tensor: Tensor;
}
