// compile's `validateWith`: the debugging switch of the design. Every step also runs on a second executor, on the same
// inputs (the primary's values, moved there), and the two results are compared: the first node that disagrees beyond
// tolerance fails the run ("error") or is reported on events$ ("warn"). Each node is judged on its own inputs, so a
// disagreement is that node's kernel, not something it inherited from upstream.
import { GraphValidationError, type Executor } from "@attngraph/graph";
import { AttnGraphError, compare, type Tensor, type Tolerance } from "@attngraph/tensor";

export interface ValidateOptions {
  /** "error" (default): the run rejects with a ValidationError at the first node that disagrees; "warn": it goes on and events$ reports each one. */
  readonly mode?: "error" | "warn";
  /** Elementwise |a − b| <= abs + rel · |b| (b = the validator's); default { abs: 1e-4, rel: 1e-4 }. NaN agrees with NaN. */
  readonly tolerance?: Tolerance;
}

export interface Validation {
  readonly executor: Executor;
  readonly mode: "error" | "warn";
  readonly tolerance: Tolerance;
}

export const DEFAULT_VALIDATE_TOLERANCE: Tolerance = { abs: 1e-4, rel: 1e-4 };

/** What a disagreement is: the node, both executors and the worst element. */
export interface Disagreement {
  readonly node: string;
  readonly kind: string;
  readonly executor: string;
  readonly validator: string;
  /** Row-major index of the worst element (-1: the shapes differ or the validator failed). */
  readonly index: number;
  readonly got: number;
  readonly expected: number;
  /** How many elements are out of tolerance. */
  readonly failures: number;
  /** Why, when not a number: the validator threw, or the shapes differ. */
  readonly reason?: string;
}

/** With validateWith in "error" mode: node `node`'s result on `executor` differs from the validator's. */
export class ValidationError extends AttnGraphError {
  readonly disagreement: Disagreement;
  constructor(runId: number, d: Disagreement) {
    const what =
      d.reason ?? `${d.failures} element(s) out of tolerance, worst at ${d.index}: ${d.got} vs ${d.expected}`;
    super(
      "validation",
      `run ${runId}: node ${d.node} (op ${d.kind}) on ${d.executor} disagrees with ${d.validator}: ${what}`,
      {
        subject: d.node,
        expected: `${d.validator}'s result`,
        got: d.reason ?? String(d.got),
      },
    );
    this.name = "ValidationError";
    this.disagreement = d;
  }
}

/** compile's validateWith / validate options, checked. */
export function checkValidation(executor: unknown, options: ValidateOptions | undefined): Validation | undefined {
  if (executor === undefined) {
    if (options !== undefined)
      throw new GraphValidationError(
        "compile.validate",
        "validate options without validateWith",
        "validateWith: an executor",
        "no validateWith",
      );
    return undefined;
  }
  if (
    typeof executor !== "object" ||
    executor === null ||
    typeof (executor as Executor).dispatch !== "function" ||
    typeof (executor as Executor).supports !== "function"
  ) {
    throw new GraphValidationError(
      "compile.validateWith",
      "not an executor",
      "an executor (e.g. createCpuExecutor())",
      typeof executor,
    );
  }
  const mode = options?.mode ?? "error";
  if (mode !== "error" && mode !== "warn")
    throw new GraphValidationError("compile.validate.mode", "unknown mode", '"error" or "warn"', String(mode));
  const tolerance = options?.tolerance ?? DEFAULT_VALIDATE_TOLERANCE;
  for (const k of ["abs", "rel"] as const) {
    const v = tolerance[k];
    if (typeof v !== "number" || !(v >= 0))
      throw new GraphValidationError(
        `compile.validate.tolerance.${k}`,
        "invalid tolerance",
        "a number >= 0",
        String(v),
      );
  }
  return { executor: executor as Executor, mode, tolerance };
}

/** The disagreement between the primary's and the validator's result of one node, or undefined when they agree. */
export function disagreement(
  base: Omit<Disagreement, "index" | "got" | "expected" | "failures" | "reason">,
  got: Tensor,
  expected: Tensor,
  tolerance: Tolerance,
): Disagreement | undefined {
  const r = compare(got, expected, tolerance, { equalNan: true });
  if (r.ok) return undefined;
  if (r.shapeMismatch !== undefined || r.worst === undefined)
    return {
      ...base,
      index: -1,
      got: NaN,
      expected: NaN,
      failures: r.failures,
      reason: r.shapeMismatch ?? "shapes differ",
    };
  return { ...base, index: r.worst.index, got: r.worst.got, expected: r.worst.expected, failures: r.failures };
}
