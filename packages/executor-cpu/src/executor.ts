// The CPU executor: values are host Tensors, kernels are plain TypeScript functions. It is the reference the other
// executors are checked against, and the fallback everywhere, so its kernels are both exact about errors and fast (the
// speed lives in kernels/matmul.ts and the fused kernels/attention.ts; this file only dispatches).
import { AttnGraphError, UnsupportedError, describe, formatShape, sameShape, type Tensor } from "@attngraph/tensor";
import type { Executor, KernelCall, Support } from "@attngraph/graph";
import { KernelTable } from "@attngraph/graph";
import { CpuArena } from "./arena.js";

/**
 * A CPU kernel: reads `call.inputs` (never mutating them) and returns a tensor of shape `call.outShape`, either new or a
 * view of an input.
 */
export type CpuKernel = (call: KernelCall<Tensor>) => Tensor;

const EXECUTOR = "cpu";

export class CpuExecutor implements Executor<Tensor> {
  readonly specVersion = 1 as const;
  readonly name = EXECUTOR;
  readonly #kernels = new KernelTable<CpuKernel>(EXECUTOR, "(call) => Tensor");

  /** Registers the kernel for `kind`. A second kernel for the same kind is an error: replacing one silently hides bugs. */
  registerKernel(kind: string, kernel: CpuKernel): void {
    this.#kernels.register(kind, kernel);
  }

  /** Never throws: the scheduler asks at compile time and falls back to another executor on `ok: false`. */
  supports(kind: string, _attrs: Readonly<Record<string, unknown>>): Support {
    return this.#kernels.supports(kind);
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
