// The kernel checks of the fused attention backward (attention-lse, attention-grad) and of kv-append (see
// kernel-checks.ts).
import { AttnGraphError, ShapeError, describe, formatShape, sameShape, type Shape } from "@attngraph/tensor";
import type { DropoutAttrs } from "./ops/dropout.js";
import {
  ATTENTION_GRAD_WRT,
  type AttentionGradAttrs,
  type AttentionGradWrt,
  type AttentionLseAttrs,
} from "./ops/attention-grad.js";
import type { AttentionMods } from "./ops/attention-mods.js";
import type { KvAppendAttrs } from "./ops/kv-append.js";
import {
  type CallInfo,
  type DropoutFields,
  type Shaped,
  type Strided,
  attrError,
  checkDropoutAttrs,
  checkMaskAttrs,
  checkScale,
  expectDim,
  expectHeadGroups,
  expectRank,
} from "./kernel-checks.js";

// ---- the fused attention backward (attention-lse, attention-grad) ----

const ATTENTION_DROPOUT: DropoutFields = { rate: "dropoutRate", seed: "dropoutSeed", training: "training" };
const NO_ATTENTION_DROPOUT: DropoutAttrs = { rate: 0, seed: 0, training: false };

/** attention-lse's attributes: the mask geometry and the softmax scale. */
export function checkAttentionLseAttrs(call: CallInfo): AttentionLseAttrs {
  // Field by field: a spread into a new literal costs microseconds on Node 20, and these run on every dispatch.
  const m = checkMaskAttrs(call);
  return { causal: m.causal, window: m.window, alignment: m.alignment, scale: checkScale(call), ...modsOf(call) };
}

/** The modification attributes as given (each kernel checks the expressions against its gathered inputs). */
export function modsOf(call: CallInfo): AttentionMods {
  const { scoreMod = null, maskMod = null, inputs = [] } = call.attrs as AttentionMods;
  return { scoreMod, maskMod, inputs };
}

/** attention-grad's attributes: the fused attention's (absent dropout = none) and `wrt`. */
export function checkAttentionGradAttrs(call: CallInfo): AttentionGradAttrs {
  const wrt = call.attrs["wrt"];
  if (!ATTENTION_GRAD_WRT.includes(wrt as AttentionGradWrt))
    throw attrError(call, "wrt", '"q", "k", "v" or a gathered slot g0 … g7', wrt);
  const d = checkDropoutAttrs(call, ATTENTION_DROPOUT, NO_ATTENTION_DROPOUT);
  const m = checkMaskAttrs(call);
  return {
    causal: m.causal,
    window: m.window,
    alignment: m.alignment,
    scale: checkScale(call),
    dropoutRate: d.rate,
    dropoutSeed: d.seed,
    training: d.training,
    wrt: wrt as AttentionGradWrt,
    ...modsOf(call),
  };
}

/** q [B, H, L, D] and k [B, Hkv, S, D] of attention-lse and attention-grad; the padding mask's shape when there is one. */
export function expectAttentionQk(call: CallInfo, q: Shaped, k: Shaped, pad: Shaped | undefined): void {
  expectRank(call, "q", q, 4, "[B, H, L, D]");
  expectRank(call, "k", k, 4, "[B, Hkv, S, D]");
  const [nb, nh] = q.shape as [number, number];
  expectDim(call, "k", "batch B of keys must match the queries", nb, k.shape[0]!, k);
  expectHeadGroups(call, "k", nh, k.shape[1]!, k);
  expectDim(call, "k", "head dim D of keys must match the queries", q.shape[3]!, k.shape[3]!, k);
  if (pad !== undefined) {
    expectRank(call, "keyPaddingMask", pad, 2, "[B, S]");
    expectDim(call, "keyPaddingMask", "batch B of the padding mask must match the queries", nb, pad.shape[0]!, pad);
    expectDim(
      call,
      "keyPaddingMask",
      "padding mask length must equal the key length S",
      k.shape[2]!,
      pad.shape[1]!,
      pad,
    );
  }
}

/** Every input of attention-grad: v [B, Hkv, S, Dv], out and grad [B, H, L, Dv], lse [B, H, L], and q, k, padding. */
export function expectAttentionGradShapes(
  call: CallInfo,
  q: Shaped,
  k: Shaped,
  v: Shaped,
  out: Shaped,
  grad: Shaped,
  lse: Shaped,
  pad: Shaped | undefined,
): void {
  expectAttentionQk(call, q, k, pad);
  expectRank(call, "v", v, 4, "[B, Hkv, S, Dv]");
  expectDim(call, "v", "batch B of values must match the queries", q.shape[0]!, v.shape[0]!, v);
  expectDim(call, "v", "values must have as many heads Hkv as keys", k.shape[1]!, v.shape[1]!, v);
  expectDim(call, "v", "value length must equal the key length S", k.shape[2]!, v.shape[2]!, v);
  const rows = [q.shape[0]!, q.shape[1]!, q.shape[2]!, v.shape[3]!];
  for (const [name, t] of [
    ["out", out],
    ["grad", grad],
  ] as const) {
    if (!sameShape(t.shape, rows))
      throw new ShapeError(
        `${call.node}.${name}`,
        `${name} must be [B, H, L, Dv] of q and v`,
        formatShape(rows),
        formatShape(t.shape),
      );
  }
  if (!sameShape(lse.shape, rows.slice(0, 3)))
    throw new ShapeError(
      `${call.node}.lse`,
      "lse must be [B, H, L] of q",
      formatShape(rows.slice(0, 3)),
      formatShape(lse.shape),
    );
}

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

/** An "input" error naming `<node>.<field>`: a value a kernel cannot take (not a shape or attribute problem). */
export function kernelInputError(
  call: CallInfo,
  field: string,
  what: string,
  expected: string,
  got: string,
): AttnGraphError {
  const subject = `${call.node}.${field}`;
  return new AttnGraphError("input", describe(subject, what, expected, got), { subject, expected, got });
}
