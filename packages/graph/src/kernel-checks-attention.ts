// The kernel checks of the fused attention backward (attention-lse, attention-grad) and of kv-append (see
// kernel-checks.ts).
import { formatShape, type Shape } from "@attngraph/tensor";
import type { KvAppendAttrs } from "./ops/kv-append.js";
import {
  type CallInfo,
  type Shaped,
  type Strided,
  attrError,
  expectDim,
  expectRank,
  kernelInputError,
} from "./kernel-checks.js";

/**
 * kv-append's call checks, shared by every executor: ranks, B/Hkv/D equal to the cache's, `past` and `shift` bound
 * integers with past + L and shift + past within the cache, and a cache whose elements do not share memory (it is
 * written in place, and writes through a broadcast view would overwrite each other). Whether x aliases the cache's
 * memory is the executor's to check (only it knows where values live).
 */
export function checkKvAppend(
  call: CallInfo,
  cache: Strided,
  x: Shaped,
): { readonly past: number; readonly shift: number } {
  expectRank(call, "cache", cache, 4, "[B, Hkv, M, D]");
  expectRank(call, "x", x, 4, "[B, Hkv, L, D]");
  (["B", "Hkv", "", "D"] as const).forEach((name, i) => {
    if (name) expectDim(call, "x", `dim ${i} (${name}) must equal the cache's`, cache.shape[i]!, x.shape[i]!, x);
  });
  const { past, shift = 0 } = call.attrs as Partial<KvAppendAttrs>;
  const m = cache.shape[2]!;
  if (!Number.isSafeInteger(past) || (past as number) < 0)
    throw attrError(call, "past", "an integer >= 0 (the runtime binds a dim name)", past);
  if (!Number.isSafeInteger(shift) || (shift as number) < 0)
    throw attrError(call, "shift", "an integer >= 0 (the runtime binds a dim name)", shift);
  if ((past as number) + x.shape[2]! > m)
    throw attrError(call, "past", `past + L <= ${m} (the cache's length)`, `${past} + ${x.shape[2]}`);
  if ((shift as number) + (past as number) > m)
    throw attrError(call, "shift", `shift + past <= ${m} (the cache's length)`, `${shift} + ${past}`);
  if (overlapping(cache.shape, cache.strides)) {
    throw kernelInputError(
      call,
      "cache",
      "the cache is written in place, so no two of its elements may share memory",
      "a non-overlapping view",
      `strides ${formatShape(cache.strides)} for ${formatShape(cache.shape)}`,
    );
  }
  return { past: past as number, shift: shift as number };
}

/** Whether two elements of a view share memory: sorted by stride, each dim must step past everything the smaller ones reach. */
function overlapping(shape: Shape, strides: readonly number[]): boolean {
  const dims = shape.map((n, i) => [n, Math.abs(strides[i]!)] as const).filter(([n]) => n > 1);
  dims.sort((p, q) => p[1] - q[1]);
  let reach = 0;
  for (const [n, s] of dims) {
    if (s <= reach) return true;
    reach += (n - 1) * s;
  }
  return false;
}
