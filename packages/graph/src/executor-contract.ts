// The executor contract, version 1.
//
// Rules:
// - An executor runs kernels on tensors. It never sees a graph: a call carries the op kind, its (normalised)
//   attributes, the input values and the output shape. `node` is there only so errors can name it.
// - Values are the executor's own (host tensors on cpu, device buffers on webgpu). `upload` and `download` cross
//   between the host and the executor; the runtime calls `download` only for outputs and watched tensors.
// - `supports` answers without throwing; the scheduler asks it at compile time so that a missing kernel is an error
//   before any run ("unsupported: op X on executor Y"), never mid-run.
// - Kernels are registered explicitly by the user (a list the user calls), never as an import side effect. A second
//   kernel for the same op on the same executor is an error.
// - `dispatch` may throw; the runtime turns that into a failed run naming the node, and the session stays usable.
import type { Shape, Tensor } from "@attngraph/tensor";

export type Support = { readonly ok: true } | { readonly ok: false; readonly reason: string };

export interface KernelCall<V> {
  readonly kind: string;
  /** The graph node being run, for error messages only. */
  readonly node: string;
  readonly attrs: Readonly<Record<string, unknown>>;
  /** In the op's declared input order; `undefined` for an absent optional input. */
  readonly inputs: readonly (V | undefined)[];
  readonly outShape: Shape;
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
  upload(tensor: Tensor): V | Promise<V>;
  download(value: V): Tensor | Promise<Tensor>;
  dispatch(call: KernelCall<V>): V | Promise<V>;
  dispose?(): void | Promise<void>;
}
