// The matmul family's params block (assembly/matmul.ts, MatmulParams): written by field name, each call of a threaded
// job its own, at the start of that call's scratch (the kernel's own memory, so no other kernel's params are touched).
import type { WasmContext } from "../context.js";

/** MatmulParams' fields in declaration order, 4 bytes each. */
export const MATMUL_FIELDS = [
  "m",
  "n",
  "k",
  "a",
  "lda",
  "b",
  "brs",
  "bcs",
  "c",
  "ldc",
  "bias",
  "biasStride",
  "scratch",
  "j0",
  "j1",
] as const;

/** Bytes the block takes at the start of a call's scratch (the kernel's scratch follows, 16-byte aligned). */
export const MATMUL_PARAMS_BYTES = 64;

export type MatmulCall = { readonly [F in (typeof MATMUL_FIELDS)[number]]?: number };

/** Writes a MatmulParams block at `address` (absent fields 0) and returns the address, for the call right after. */
export function writeMatmulParams(ctx: WasmContext, address: number, call: MatmulCall): number {
  const i32 = ctx.i32();
  const base = address / 4;
  MATMUL_FIELDS.forEach((f, i) => {
    i32[base + i] = call[f] ?? 0;
  });
  return address;
}
