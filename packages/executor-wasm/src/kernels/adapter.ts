// What every kernel adapter needs between a KernelCall and the module: fetch inputs by slot, read the attributes, and
// where the result goes. The call reaching a kernel has passed checkCall (the dispatch runs it before any kernel): its
// required inputs are present and of their declared dtype, its attributes normalized, its shapes those of the op's
// shape rule. What is left here is what only this executor can know or read: that an input is a wasm value, a dim
// attribute bound to an integer, and key padding values (in the module's memory) that are 0 or 1. Kernels never trap
// on bad calls: everything the module would index is checked before it runs.
import { dtypeError, kernelInputError, keyPaddingError, type KernelCall } from "@attngraph/graph";
import type { WasmContext } from "../context.js";
import { WasmValue } from "../value.js";

export type Call = KernelCall<WasmValue>;

/** The input in `slot` (declared as `name`), required by the op's declaration, so present. */
export function requireInput(call: Call, slot: number, name: string): WasmValue {
  return optionalInput(call, slot, name)!;
}

/** The inputs in slots 0, 1, … (declared as `names`, in slot order), each required by the op's declaration. */
export function requireInputs<const N extends readonly string[]>(
  call: Call,
  ...names: N
): { [I in keyof N]: WasmValue } {
  return names.map((name, slot) => requireInput(call, slot, name)) as { [I in keyof N]: WasmValue };
}

/** The inputs in slots `from`, `from` + 1, … (declared as `names`, in slot order), each undefined when absent. */
export function optionalInputs<const N extends readonly string[]>(
  call: Call,
  from: number,
  ...names: N
): { [I in keyof N]: WasmValue | undefined } {
  return names.map((name, i) => optionalInput(call, from + i, name)) as { [I in keyof N]: WasmValue | undefined };
}

/**
 * The input in `slot`, or undefined when absent. checkCall saw its dtype; something that is not a wasm value (a host
 * tensor dispatched by hand has a shape and a dtype too) is an "input" error naming `<node>.<name>`.
 */
export function optionalInput(call: Call, slot: number, name: string): WasmValue | undefined {
  const v: unknown = call.inputs[slot];
  if (v instanceof WasmValue) return v;
  if (v === undefined || v === null) return undefined;
  throw kernelInputError(
    call,
    name,
    `input ${slot} (${name}) of op ${call.kind} is not a wasm value`,
    "a WasmValue",
    typeof v,
  );
}

/**
 * A view op's input x (reshape, transpose, slice). checkCall lets any dtype past a view op (views move elements,
 * never read them), but these kernels' slots are float32 as the graph declares them: an int32 value is the dtype
 * error every other op's float slot gives.
 */
export function viewInput(call: Call): WasmValue {
  const x = requireInput(call, 0, "x");
  if (x.dtype !== "float32") throw dtypeError(call, 0, "x", "float32", x.dtype);
  return x;
}

/** The checked call's attributes as its op declares them (checkCall normalized them): graph's, re-exported. */
export { attrsOf } from "@attngraph/graph";

/**
 * Checks that every value of a key padding mask [B, S] (its shape is the op's shape rule's) is exactly 0 or 1, read
 * from the module's memory, before anything is written: the CPU executor's rule and error.
 */
export function checkKeyPadding(call: Call, ctx: WasmContext, pad: WasmValue): void {
  const [nb, ns] = pad.shape as [number, number];
  const f32 = ctx.f32();
  const base = pad.address / 4;
  const [ps0, ps1] = pad.strides as [number, number];
  for (let b = 0; b < nb; b++) {
    for (let j = 0; j < ns; j++) {
      const v = f32[base + b * ps0 + j * ps1]!;
      if (v !== 0 && v !== 1) throw keyPaddingError(call, v, b, j);
    }
  }
}

/**
 * Whether writing a dense result into `out` could overwrite elements of `input` before they are read: the same block,
 * overlapping, and not exactly the input's own dense elements (which the in-place kernels read before writing).
 */
export function clobbers(out: WasmValue, input: WasmValue): boolean {
  if (out.block !== input.block) return false;
  const [lo, hi] = input.span();
  const oLo = out.offset;
  const oHi = out.offset + out.size - 1;
  if (oHi < lo || hi < oLo) return false;
  return !(input.dense && input.offset === out.offset);
}

/**
 * Runs `write(dst)` for an in-place capable op: into `ctx.output` directly, or, when that would clobber the input
 * before it is read (an out aliasing a strided input), into a temporary first.
 */
export function writeInPlace(
  call: Call,
  ctx: WasmContext,
  input: WasmValue,
  write: (dst: WasmValue) => void,
): WasmValue {
  const done = writeInPlaceChunked(call, ctx, input, (dst) => {
    write(dst);
    return undefined;
  });
  return done as WasmValue; // nothing was pending, so the answer came at once
}

/**
 * `writeInPlace` for a `write` that may answer with a Promise (a kernel working in chunks, chunks.ts): the temporary,
 * if any, is kept until it settles, and the result is then a Promise too.
 */
export function writeInPlaceChunked(
  call: Call,
  ctx: WasmContext,
  input: WasmValue,
  write: (dst: WasmValue) => Promise<void> | undefined,
): WasmValue | Promise<WasmValue> {
  const out = ctx.output(call, input.shape);
  if (!clobbers(out, input)) return fillingChunked(call, ctx, out, () => write(out));
  const tmp = ctx.alloc(input.shape, `${call.node} (temporary)`);
  let pending: Promise<void> | undefined;
  try {
    pending = write(tmp);
  } catch (e) {
    ctx.release(tmp);
    throw e;
  }
  const copyBack = (): WasmValue => {
    try {
      ctx.copy(tmp, out);
    } finally {
      ctx.release(tmp);
    }
    return out;
  };
  if (pending === undefined) return copyBack();
  return pending.then(copyBack, (e: unknown) => {
    ctx.release(tmp);
    throw e;
  });
}

/** Runs `fill(out)`; when it throws (e.g. a memory limit on a temporary), a freshly allocated `out` is released. */
export function filling(call: Call, ctx: WasmContext, out: WasmValue, fill: () => void): WasmValue {
  try {
    fill();
  } catch (e) {
    if (out !== call.out) ctx.release(out);
    throw e;
  }
  return out;
}

/**
 * `filling` for a `fill` that may answer with a Promise (a kernel working in chunks, chunks.ts): then a Promise of
 * `out`, with the same release when it rejects.
 */
export function fillingChunked(
  call: Call,
  ctx: WasmContext,
  out: WasmValue,
  fill: () => Promise<void> | undefined,
): WasmValue | Promise<WasmValue> {
  const failed = (e: unknown): never => {
    if (out !== call.out) ctx.release(out);
    throw e;
  };
  let pending: Promise<void> | undefined;
  try {
    pending = fill();
  } catch (e) {
    failed(e);
  }
  return pending === undefined ? out : pending.then(() => out, failed);
}

/** Product of `dims` (1 for none). */
export function product(dims: readonly number[]): number {
  return dims.reduce((p, d) => p * d, 1);
}
