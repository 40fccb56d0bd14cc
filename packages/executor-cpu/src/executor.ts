// The CPU executor: values are host Tensors, kernels are plain TypeScript functions. It is the reference the other
// executors are checked against, and the fallback everywhere, so its kernels are both exact about errors and fast (the
// speed lives in kernels/matmul.ts and the fused kernels/attention.ts; this file only dispatches). Long kernels work in
// chunks when the call carries a signal (chunks.ts), so a run can be aborted mid-step.
import {
  AttnGraphError,
  UnsupportedError,
  describe,
  formatShape,
  sameShape,
  type AnyTensor,
  type Tensor,
} from "@attngraph/tensor";
import type { Executor, KernelCall, Support } from "@attngraph/graph";
import { KernelTable, checkCall } from "@attngraph/graph";
import { CpuArena } from "./arena.js";
import { DEFAULT_CHUNK_WORK } from "./chunks.js";

/**
 * A CPU kernel: reads `call.inputs` (never mutating them) and returns a tensor of shape `call.outShape`, either new or a
 * view of an input.
 */
export type CpuKernel = (call: KernelCall<Tensor>) => Tensor;

/** A call without an AbortSignal: always answered synchronously. */
export type UnsignalledCall = KernelCall<Tensor> & { readonly signal?: undefined };

/**
 * A kernel that can run long (the built-in projection, out-proj, score, weighted-sum, mask, softmax and attention).
 * Synchronous for a call without a signal, and for any call whose work fits one chunk of `chunkWork` multiply-adds;
 * a bigger call with a signal works in chunks, yielding to the event loop and checking the signal between them, and
 * answers with a Promise (rejected with a KernelAbortedError once the signal fired).
 */
export interface ChunkedCpuKernel {
  (call: UnsignalledCall, chunkWork?: number): Tensor;
  (call: KernelCall<Tensor>, chunkWork?: number): Tensor | Promise<Tensor>;
}

export interface CpuExecutorOptions {
  /**
   * Work per chunk of a long kernel run with a signal, in multiply-adds (default 2²⁵, about 15 ms on one core): an
   * aborted run stops within about one chunk. Smaller means quicker cancellation and more yields.
   */
  readonly chunkWork?: number;
}

const EXECUTOR = "cpu";

export class CpuExecutor implements Executor<Tensor> {
  readonly specVersion = 1 as const;
  readonly name = EXECUTOR;
  readonly #kernels = new KernelTable<CpuKernel | ChunkedCpuKernel>(EXECUTOR, "(call) => Tensor");
  readonly #chunkWork: number;

  constructor(options: CpuExecutorOptions = {}) {
    const work = options.chunkWork ?? DEFAULT_CHUNK_WORK;
    if (!(Number.isSafeInteger(work) && work >= 1)) {
      const subject = "executor cpu.chunkWork";
      throw new AttnGraphError(
        "attr",
        describe(subject, "invalid chunk size", "a whole number of multiply-adds >= 1", String(work)),
        { subject },
      );
    }
    this.#chunkWork = work;
  }

  /**
   * Registers the kernel for `kind`. A second kernel for the same kind is an error: replacing one silently hides bugs.
   * (The first overload types an inline `(call) => …` as a CpuKernel; TypeScript gives a union no parameter types.)
   */
  registerKernel(kind: string, kernel: CpuKernel): void;
  registerKernel(kind: string, kernel: CpuKernel | ChunkedCpuKernel): void;
  registerKernel(kind: string, kernel: CpuKernel | ChunkedCpuKernel): void {
    this.#kernels.register(kind, kernel);
  }

  /** Never throws: the scheduler asks at compile time and falls back to another executor on `ok: false`. */
  supports(kind: string, _attrs: Readonly<Record<string, unknown>>): Support {
    return this.#kernels.supports(kind);
  }

  /**
   * Host memory is this executor's memory; kernels never mutate their inputs, so no copy is needed. An int32 tensor
   * passes as it is: only int32 slots (embedding ids, cross-entropy targets) take one, and their kernels check the dtype
   * (`intInput`), as every float kernel checks that its inputs are float32.
   */
  upload(tensor: AnyTensor): Tensor {
    return tensor as Tensor;
  }

  download(value: Tensor): Tensor {
    return value;
  }

  /** Planned destinations live in one Float32Array per arena (see the scheduler's buffer planner). */
  createArena(elements: number): CpuArena {
    return new CpuArena(elements);
  }

  /** Synchronous for a call without a signal; with one, a long kernel may answer with a Promise (ChunkedCpuKernel). */
  dispatch(call: UnsignalledCall): Tensor;
  dispatch(call: KernelCall<Tensor>): Tensor | Promise<Tensor>;
  dispatch(call: KernelCall<Tensor>): Tensor | Promise<Tensor> {
    const kernel = this.#kernels.get(call.kind);
    if (kernel === undefined)
      throw new UnsupportedError(`op ${call.kind} on executor ${EXECUTOR}`, { subject: call.node });
    const checked = checkCall(call);
    const out: unknown = kernel(checked, this.#chunkWork);
    // Only a call with a signal may be answered later; anything else that is not a tensor is reported below.
    if (call.signal !== undefined && out instanceof Promise) return out.then((t: unknown) => checkOutput(call, t));
    return checkOutput(call, out);
  }
}

/** A user kernel may return anything; a wrong shape caught here names the node instead of failing downstream. */
function checkOutput(call: KernelCall<Tensor>, out: unknown): Tensor {
  if (!isTensorLike(out) || !sameShape(out.shape, call.outShape)) {
    // Formatted only on failure: this check runs after every kernel call.
    const got = isTensorLike(out) ? formatShape(out.shape) : describeValue(out);
    const expected = formatShape(call.outShape);
    throw new AttnGraphError(
      "kernel-output",
      describe(call.node, `kernel for op ${call.kind} on executor ${EXECUTOR} returned the wrong shape`, expected, got),
      { subject: call.node, expected, got },
    );
  }
  return out;
}

function isTensorLike(v: unknown): v is Tensor {
  return (
    typeof v === "object" &&
    v !== null &&
    Array.isArray((v as Tensor).shape) &&
    (v as Tensor).data instanceof Float32Array
  );
}

function describeValue(v: unknown): string {
  return v === null ? "null" : typeof v === "object" ? "an object that is not a tensor" : typeof v;
}
