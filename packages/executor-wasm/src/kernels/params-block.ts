// Writing a params block of integer fields (PairParams, LookupParams: assembly/add.ts, assembly/embedding.ts), once:
// the values go in the order of the block's field list (PAIR_FIELDS, LOOKUP_FIELDS), the list a test holds to the
// module's own declaration, so the type checker counts them against the fields the module reads.
import type { WasmContext } from "../context.js";

/**
 * Writes `values` (one per name of `fields`, in its order) as consecutive int32 at `address` (4-byte aligned) and
 * returns the address, for the call right after.
 */
export function writeIntFields<const F extends readonly string[]>(
  ctx: WasmContext,
  address: number,
  fields: F,
  values: { readonly [I in keyof F]: number },
): number {
  const i32 = ctx.i32();
  const at = address / 4;
  const v = values as readonly number[];
  for (let i = 0; i < fields.length; i++) i32[at + i] = v[i]!;
  return address;
}
