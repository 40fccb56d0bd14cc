// cross-entropy: F.cross_entropy of logits [..., V] against int32 targets [...], in float64 in the module
// (assembly/cross-entropy.ts: per position logsumexp − logit of the target, the row max subtracted first). Every
// target is checked on the host first (findBadIndex: outside [0, V) and not the ignore index → an "input" error naming
// the node, the position and the value), before anything is allocated or written. Ignored positions give 0 and are not
// counted; "mean" divides by the count (0 when nothing is counted: no NaN); "sum"; "none" writes one loss per position.
// With a signal, a big call runs in chunks of positions; the float64 running sum is handed from chunk to chunk, so
// the result is the unchunked one bit for bit.
import { findBadIndex, type CrossEntropyAttrs } from "@attngraph/graph";
import type { WasmContext } from "../context.js";
import type { WasmValue } from "../value.js";
import { chunkedKernel, overRows } from "../chunks.js";
import { attrsOf, fillingChunked, requireInput, type Call } from "./adapter.js";
import { hostElements } from "./host-read.js";

/** Inputs: logits [..., V], targets [...] int32; attrs { ignoreIndex, reduction } → [] ("mean", "sum") or [...] ("none"). */
export const crossEntropyKernel = chunkedKernel((call, ctx) => {
  const { logits, targets, ignoreIndex, reduction, nv, counted } = lossTargets(call, ctx);
  const out = ctx.output(call, reduction === "none" ? targets.shape : []);
  return fillingChunked(call, ctx, out, () => {
    const rows = targets.size;
    let total = 0;
    // Descriptors are shared: both written again for each chunk (another kernel may run in between).
    const part = (r0: number, r1: number) => {
      const dst = reduction === "none" ? out.address : 0;
      total = ctx.exports.crossEntropy(
        logits.address,
        ctx.desc(logits, 0),
        writeTargets(ctx, ctx.params, targetFields(ctx, targets, ignoreIndex)),
        dst,
        r0,
        r1,
        total,
      );
    };
    const finish = (): void => {
      if (reduction === "none") return;
      ctx.f32()[out.address / 4] = reduction === "sum" ? total : counted === 0 ? 0 : total / counted;
    };
    const pending = rows === 0 ? undefined : overRows(call, ctx, rows, nv * CROSS_ENTROPY_WORK, part);
    if (pending === undefined) {
      finish();
      return undefined;
    }
    return pending.then(finish);
  });
});

/** What cross-entropy and its gradient read before anything is allocated: their inputs, attributes, V and the count. */
export interface LossTargets extends CrossEntropyAttrs {
  readonly logits: WasmValue;
  readonly targets: WasmValue;
  /** V, the classes. */
  readonly nv: number;
  /** Positions whose target is not the ignore index: the mean's divisor. */
  readonly counted: number;
}

/**
 * Inputs logits [..., V] and int32 targets [...] (shapes and dtypes the shape rule's), with every target checked on
 * the host (findBadIndex); the declaration keeps ignoreIndex within int32, as the module takes it.
 */
export function lossTargets(call: Call, ctx: WasmContext): LossTargets {
  const logits = requireInput(call, 0, "logits");
  const targets = requireInput(call, 1, "targets");
  const { ignoreIndex, reduction } = attrsOf<CrossEntropyAttrs>(call);
  const nv = logits.shape[logits.rank - 1]!;
  const values = hostElements(ctx, targets); // a view of the memory: used before anything is allocated
  const bad = findBadIndex(call, "targets", values, targets.shape, nv, "target", ignoreIndex);
  if (bad !== undefined) throw bad;
  let counted = values.length;
  if (ignoreIndex !== null) for (const t of values) if (t === ignoreIndex) counted--;
  return { logits, targets, ignoreIndex, reduction, nv, counted };
}

/** The targets' TargetParams fields (descriptor slot 1; the descriptors are shared: written again for each chunk). */
export function targetFields(ctx: WasmContext, targets: WasmValue, ignoreIndex: number | null): TargetFields {
  return {
    targets: targets.address,
    tdesc: ctx.desc(targets, 1),
    ignore: ignoreIndex ?? 0,
    hasIgnore: ignoreIndex === null ? 0 : 1,
  };
}

/** Work per element in multiply-adds of the SIMD matmul: two scalar passes and a float64 exp (measured ≈ 90, Node 20). */
const CROSS_ENTROPY_WORK = 90;

/** TargetParams' fields in the module's order (assembly/cross-entropy.ts): `div` a float64 at 0, then these 4 bytes each from byte 8. */
export const TARGET_FIELDS = ["div", "targets", "tdesc", "ignore", "hasIgnore", "grad", "gstride"] as const;

export interface TargetFields {
  readonly targets: number;
  readonly tdesc: number;
  readonly ignore: number;
  readonly hasIgnore: number;
  readonly grad?: number;
  readonly gstride?: number;
  readonly div?: number;
}

/** Writes a TargetParams block at `address` (8-byte aligned; grad, gstride and div 0 when not given) and returns the address. */
export function writeTargets(ctx: WasmContext, address: number, f: TargetFields): number {
  ctx.f64()[address >> 3] = f.div ?? 0;
  const i32 = ctx.i32();
  const at = (address + 8) >> 2;
  i32[at] = f.targets;
  i32[at + 1] = f.tdesc;
  i32[at + 2] = f.ignore;
  i32[at + 3] = f.hasIgnore;
  i32[at + 4] = f.grad ?? 0;
  i32[at + 5] = f.gstride ?? 0;
  return address;
}
