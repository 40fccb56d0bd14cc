// The executor contract, version 1.
//
// Rules:
// - An executor runs kernels on tensors. It never sees a graph: a call carries the op kind, its (normalised)
//   attributes, the input values and the output shape. `node` is there only so errors can name it.
// - Values are the executor's own (host tensors on cpu, device buffers on webgpu). `upload` and `download` cross
//   between the host and the executor; the runtime calls `download` only for outputs and watched tensors, which are
//   float32 (every op's output is); `upload` also takes int32 inputs.
// - `supports` answers without throwing; the scheduler asks it at compile time so that a missing kernel is an error
//   before any run ("unsupported: op X on executor Y"), never mid-run.
// - Kernels are registered explicitly by the user (a list the user calls), never as an import side effect. A second
//   kernel for the same op on the same executor is an error.
// - A call may carry `out`, a planned destination buffer; using it is optional, returning it when used.
// - Memory an executor allocates is its own; `release` tells it when the runtime no longer needs a value.
// - `dispatch` may throw; the runtime turns that into a failed run naming the node, and the session stays usable.
// - A call may carry `signal`, the run's AbortSignal (only when the run has one). A kernel that can run long works in
//   chunks and, between chunks, yields to the event loop (so that `abort()` from a timer or a handler can happen at
//   all) and checks the signal, throwing an error carrying `signal.reason` when it fired; the runtime turns that throw
//   into the run's AbortError. A short call needs neither: it is one chunk.
import type { AnyTensor, Shape, Tensor } from "@attngraph/tensor";

export type Support = { readonly ok: true } | { readonly ok: false; readonly reason: string };

export interface KernelCall<V> {
  readonly kind: string;
  /** The graph node being run, for error messages only. */
  readonly node: string;
  readonly attrs: Readonly<Record<string, unknown>>;
  /** In the op's declared input order; `undefined` for an absent optional input. */
  readonly inputs: readonly (V | undefined)[];
  readonly outShape: Shape;
  /**
   * Optional destination planned by the scheduler's buffer planner: dense, row-major, of `outShape`, holding garbage.
   * A compute kernel may write its result there and return it (saving an allocation). `out` may be the memory of the
   * input the op declares as `inPlace` (mask, softmax, dropout), so such kernels must read each element before writing
   * it; it never aliases any other input. Kernels that ignore it allocate as usual. View ops never get one.
   */
  readonly out?: V | undefined;
  /**
   * The run's AbortSignal, when it has one. Kernels that can run long check it between chunks of work and throw once it
   * has fired (see the rules above); ignoring it is allowed, and then a run stops only between steps.
   */
  readonly signal?: AbortSignal | undefined;
}

/**
 * A block of executor memory the runtime lays planned values into (see the scheduler's buffer planner). One arena
 * serves one run at a time; the runtime pools them, so memory does not grow across runs.
 */
export interface Arena<V> {
  /** A dense row-major value of `shape` starting `offset` elements into the arena. */
  view(offset: number, shape: Shape): V;
  /** Whether `value`'s memory lies in this arena. */
  holds(value: V): boolean;
  /** Copies `src` into `dst` (same shape) and returns `dst`. */
  copy(src: V, dst: V): V;
  /** Frees the arena's memory; called when the session is disposed. */
  dispose?(): void;
}

export interface Executor<V = unknown> {
  readonly specVersion: 1;
  /** Short unique name: "cpu", "wasm", "webgpu". */
  readonly name: string;
  /** Whether a kernel exists for this op with these attributes. Never throws. */
  supports(kind: string, attrs: Readonly<Record<string, unknown>>): Support;
  /** Registers the kernel for one op kind. The kernel's type is the executor's own. */
  registerKernel(kind: string, kernel: unknown): void;
  /** One-time setup (load a module, request a device). Called by the runtime before the first run. */
  init?(): Promise<void>;
  /**
   * A host tensor onto the executor. int32 tensors (token ids, targets) arrive only as inputs of slots declared int32
   * (embedding ids, cross-entropy targets); an executor keeps their dtype with the value, so a kernel given a value of
   * the wrong dtype says so instead of reading its bits as the other type.
   */
  upload(tensor: AnyTensor): V | Promise<V>;
  download(value: V): Tensor | Promise<Tensor>;
  /**
   * Optional: `download` always returns a fresh copy that shares no memory with any value of this executor (wasm and
   * webgpu read the bytes out of their own memory anyway). The runtime then hands a dense download to the caller as it
   * is, instead of copying it a second time; without it (the cpu executor's download is the value itself) it copies.
   */
  readonly downloadsCopy?: boolean;
  dispatch(call: KernelCall<V>): V | Promise<V>;
  /** Optional: memory for planned destinations (`KernelCall.out`), `elements` float32 values. */
  createArena?(elements: number): Arena<V>;
  /**
   * Optional: the runtime is done with a value it got from `upload` or `dispatch` (at the end of each run, and for
   * weights when the session is disposed). Views share their source's memory, so an executor that frees memory counts
   * references. Values inside an arena are the arena's and must be ignored here.
   */
  release?(value: V): void;
  dispose?(): void | Promise<void>;
  /**
   * Optional: one line on how this executor runs, for a plan's explain() (the wasm executor: its flavour and threads,
   * and why fewer threads run than were asked for). Never throws.
   */
  describe?(): string;
}
