// The optimizers' numbers as one OptimParams block (assembly/adam.ts), written field by field by name right before
// each call into the shared params area: the float64 fields first (8 bytes each, OPTIM_FLOAT_FIELDS' order), then
// `extra` (a tensor address), `flag` and `hasParam` (4 bytes each). A test holds this layout to the compiler's.
import type { WasmContext } from "../context.js";

/** OptimParams' float64 fields, in the module's order from byte 0. */
export const OPTIM_FLOAT_FIELDS = ["beta", "wd", "t", "lr", "beta1", "beta2", "eps", "mu", "keep"] as const;
/** OptimParams' 4-byte integer fields, in the module's order after the float64 ones. */
export const OPTIM_INT_FIELDS = ["extra", "flag", "hasParam"] as const;

export type OptimFields = Partial<
  Record<(typeof OPTIM_FLOAT_FIELDS)[number] | (typeof OPTIM_INT_FIELDS)[number], number>
>;

/** Writes an OptimParams block at `address` (8-byte aligned; a field not given is 0) and returns the address. */
export function writeOptim(ctx: WasmContext, address: number, f: OptimFields): number {
  const f64 = ctx.f64();
  const at = address >> 3;
  f64[at] = f.beta ?? 0;
  f64[at + 1] = f.wd ?? 0;
  f64[at + 2] = f.t ?? 0;
  f64[at + 3] = f.lr ?? 0;
  f64[at + 4] = f.beta1 ?? 0;
  f64[at + 5] = f.beta2 ?? 0;
  f64[at + 6] = f.eps ?? 0;
  f64[at + 7] = f.mu ?? 0;
  f64[at + 8] = f.keep ?? 0;
  const i32 = ctx.i32();
  const ai = (address >> 2) + 2 * OPTIM_FLOAT_FIELDS.length;
  i32[ai] = f.extra ?? 0;
  i32[ai + 1] = f.flag ?? 0;
  i32[ai + 2] = f.hasParam ?? 0;
  return address;
}
