// What every kernel adapter needs between a KernelCall and the module: fetch inputs by slot (of the dtype the slot
// takes), check ranks, dims and attributes with the CPU executor's errors (each naming `<node>.<field>`), and the
// mask/softmax/dropout attribute rules. Kernels never trap on bad calls: everything the module would index is checked
// here first.
import { AttnGraphError, describe, type DType } from "@attngraph/tensor";
import type { KernelCall } from "@attngraph/graph";
import type { WasmContext } from "../context.js";
import { WasmValue } from "../value.js";
// Shared by every executor (@attngraph/graph kernel-checks), re-exported under the names this package always used.
// The dropout generator's host half (fmix32 of the seed, the threshold) is the graph package's too: the module takes
// the seed pre-mixed.
import { dtypeError, expectDim, expectRank } from "@attngraph/graph";
export {
  attrError,
  checkDropoutAttrs,
  checkMaskAttrs,
  checkScale,
  dropoutThreshold,
  expectDim,
  expectHeadGroups,
  expectRank,
  fmix32,
  maskOffset,
  windowOf,
  type DropoutFields,
} from "@attngraph/graph";

export type Call = KernelCall<WasmValue>;

/**
 * The input in `slot` (declared as `name`); missing → an "input" error naming node and slot. `dtype` is the element
 * type the slot takes: float32 for every slot but an embedding's ids and a cross-entropy's targets (int32).
 */
export function requireInput(call: Call, slot: number, name: string, dtype: DType = "float32"): WasmValue {
  const v = optionalInput(call, slot, name, dtype);
  if (v === undefined) {
    const subject = `${call.node}.${name}`;
    throw new AttnGraphError(
      "input",
      describe(subject, `missing required input ${slot} (${name}) of op ${call.kind}`, "a value", "undefined"),
      {
        subject,
        expected: "a value",
        got: "undefined",
      },
    );
  }
  return v;
}

/**
 * The input in `slot`, or undefined when absent. Something that is not a wasm value, or a value of another dtype than
 * the slot's (int32 ids in a float slot, float32 ids in an int one: their bits would be read as the other type), is an
 * "input" error naming `<node>.<name>`.
 */
export function optionalInput(call: Call, slot: number, name: string, dtype: DType = "float32"): WasmValue | undefined {
  const v: unknown = call.inputs[slot];
  if (v === undefined || v === null) return undefined;
  if (v instanceof WasmValue && v.dtype === dtype) return v; // the usual case: no error text built
  const subject = `${call.node}.${name}`;
  if (!(v instanceof WasmValue)) {
    throw new AttnGraphError(
      "input",
      describe(subject, `input ${slot} (${name}) of op ${call.kind} is not a wasm value`, "a WasmValue", typeof v),
      {
        subject,
        expected: "a WasmValue",
        got: typeof v,
      },
    );
  }
  if (v.dtype !== dtype) {
    throw dtypeError(call, slot, name, dtype, v.dtype);
  }
  return v;
}

/**
 * Checks a key padding mask [B, S] against batch `nb` and key length `ns`, and that every value is exactly 0 or 1
 * (read from the module's memory), before anything is written: the CPU executor's rule and error.
 */
export function checkKeyPadding(
  call: Call,
  ctx: WasmContext,
  pad: WasmValue,
  nb: number,
  ns: number,
  batchOf: string,
): void {
  expectRank(call, "keyPaddingMask", pad, 2, "[B, S]");
  expectDim(call, "keyPaddingMask", `batch B of the padding mask must match the ${batchOf}`, nb, pad.shape[0]!, pad);
  expectDim(call, "keyPaddingMask", "padding mask length must equal the key length S", ns, pad.shape[1]!, pad);
  const f32 = ctx.f32();
  const base = pad.address / 4;
  const [ps0, ps1] = pad.strides as [number, number];
  for (let b = 0; b < nb; b++) {
    for (let j = 0; j < ns; j++) {
      const v = f32[base + b * ps0 + j * ps1]!;
      if (v !== 0 && v !== 1) {
        const subject = `${call.node}.keyPaddingMask`;
        const got = `${v} at [${b}, ${j}]`;
        throw new AttnGraphError(
          "input",
          describe(subject, "key padding values must be 1 (padded key) or 0 (real key)", "0 or 1", got),
          {
            subject,
            expected: "0 or 1",
            got,
          },
        );
      }
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
