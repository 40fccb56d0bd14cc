// The CPU executor: values are host Tensors, kernels are plain TypeScript functions. It is the reference the other
// executors are checked against, and the fallback everywhere, so its kernels are both exact about errors and fast (the
// speed lives in kernels/matmul.ts and the fused kernels/attention.ts; this file only dispatches).
import { AttnGraphError, UnsupportedError, describe, formatShape, sameShape, type Tensor } from "@attngraph/tensor";
import type { Executor, KernelCall, Support } from "@attngraph/graph";
import { CpuArena } from "./arena.js";

/**
 * A CPU kernel: reads `call.inputs` (never mutating them) and returns a tensor of shape `call.outShape`, either new or a
 * view of an input.
 */
export type CpuKernel = (call: KernelCall<Tensor>) => Tensor;

const EXECUTOR = "cpu";
const OK: Support = Object.freeze({ ok: true });

export class CpuExecutor implements Executor<Tensor> {
  readonly specVersion = 1 as const;
  readonly name = EXECUTOR;
  readonly #kernels = new Map<string, CpuKernel>();

  /** Registers the kernel for `kind`. A second kernel for the same kind is an error: replacing one silently hides bugs. */
  registerKernel(kind: string, kernel: CpuKernel): void {
    if (typeof kind !== "string" || kind.length === 0) {
      throw new AttnGraphError("invalid-kernel", describe(`executor ${EXECUTOR}`, "op kind must be a non-empty string", "a string", String(kind)), {
        subject: `executor ${EXECUTOR}`,
      });
    }
    if (typeof kernel !== "function") {
      const subject = `op ${kind}`;
      throw new AttnGraphError("invalid-kernel", describe(subject, `kernel for executor ${EXECUTOR} must be a function`, "(call) => Tensor", typeof kernel), {
        subject,
        expected: "(call) => Tensor",
        got: typeof kernel,
      });
    }
    if (this.#kernels.has(kind)) {
      const subject = `op ${kind}`;
      throw new AttnGraphError(
        "duplicate-kernel",
        describe(subject, `a kernel is already registered on executor ${EXECUTOR}`, "one kernel per op and executor", "a second registration"),
        { subject, expected: "one kernel per op and executor", got: "a second registration" },
      );
    }
    this.#kernels.set(kind, kernel);
  }

  /** Never throws: the scheduler asks at compile time and falls back to another executor on `ok: false`. */
  supports(kind: string, _attrs: Readonly<Record<string, unknown>>): Support {
    return this.#kernels.has(kind) ? OK : { ok: false, reason: `no kernel for op ${String(kind)}` };
  }

  /** Host memory is this executor's memory; kernels never mutate their inputs, so no copy is needed. */
  upload(tensor: Tensor): Tensor {
    return tensor;
  }

  download(value: Tensor): Tensor {
    return value;
  }

  /** Planned destinations live in one Float32Array per arena (see the scheduler's buffer planner). */
  createArena(elements: number): CpuArena {
    return new CpuArena(elements);
  }

  dispatch(call: KernelCall<Tensor>): Tensor {
    const kernel = this.#kernels.get(call.kind);
    if (kernel === undefined) throw new UnsupportedError(`op ${call.kind} on executor ${EXECUTOR}`, { subject: call.node });
    const out = kernel(call);
    // A user kernel may return anything; a wrong shape caught here names the node instead of failing downstream.
    const got = isTensorLike(out) ? formatShape(out.shape) : describeValue(out);
    if (!isTensorLike(out) || !sameShape(out.shape, call.outShape)) {
      const expected = formatShape(call.outShape);
      throw new AttnGraphError(
        "kernel-output",
        describe(call.node, `kernel for op ${call.kind} on executor ${EXECUTOR} returned the wrong shape`, expected, got),
        { subject: call.node, expected, got },
      );
    }
    return out;
  }
}

function isTensorLike(v: unknown): v is Tensor {
  return typeof v === "object" && v !== null && Array.isArray((v as Tensor).shape) && (v as Tensor).data instanceof Float32Array;
}

function describeValue(v: unknown): string {
  return v === null ? "null" : typeof v === "object" ? "an object that is not a tensor" : typeof v;
}
