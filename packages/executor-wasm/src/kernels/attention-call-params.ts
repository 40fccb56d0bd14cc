// The params blocks of one fused attention call, forward (attention.ts) or backward (attention-grad.ts), built once
// per call from its operands: the two modules' blocks share most fields (attention-params.ts, attention-grad-params.ts),
// so one object of each kind holds the fields of both, and each entry's field list writes the ones it declares.
// `attentionRun` and `attentionGradRun` step the per-head fields in the module; the chunked steps update them in place
// from the host (no object per kv head or query block: an object literal spreading its ~30 fields per query block
// cost ~10 µs, more than a small head's work such as the copy task's 8×8 heads, and garbage for the collector).
import { dropoutThreshold, fmix32, maskOffset, windowOf, type AttentionAttrs } from "@attngraph/graph";
import type { WasmValue } from "../value.js";
import type { BlockParams, PackParams, RunParams } from "./attention-params.js";
import type { GradBlockParams, GradPackParams } from "./attention-grad-params.js";

/** The attributes the blocks read: the mask, the scale and the dropout (none for attention-lse). */
export type BlockAttrs = Pick<
  AttentionAttrs,
  "causal" | "window" | "alignment" | "scale" | "dropoutRate" | "dropoutSeed" | "training"
>;

/**
 * A call's operands: q and k always; v (not attention-lse's); the backward's grad, out and lse; the key padding. A
 * tensor the call lacks has address 0 and batch and head strides 0.
 */
export interface AttentionOperands {
  readonly q: WasmValue;
  readonly k: WasmValue;
  readonly v: WasmValue | undefined;
  readonly grad?: WasmValue | undefined;
  readonly out?: WasmValue | undefined;
  readonly lse?: WasmValue | undefined;
  readonly pad: WasmValue | undefined;
}

/** A call's params blocks: its per-head addresses at batch, kv head and head 0, and the counts and strides to step them. */
export interface CallParams {
  readonly pack: { -readonly [F in keyof (PackParams & GradPackParams)]: number };
  readonly block: { -readonly [F in keyof (BlockParams & GradBlockParams)]: number };
  readonly run: RunParams;
}

/** `maxBlocks` for "every key block of the query block". */
export const ALL_BLOCKS = 2 ** 31 - 1;

const NONE = { address: 0, strides: [0, 0, 0, 0] } as const;

/**
 * The params of a whole call writing `dst` with `scratch`: `mode` is the backward's (GRAD_MODE; 0 for the forward, which
 * does not read it). b0 .. g1 cover the whole call (the forward's threads narrow them).
 */
export function callParams(
  { q, k, v, grad, out, lse, pad }: AttentionOperands,
  attrs: BlockAttrs,
  mode: number,
  dst: WasmValue,
  scratch: number,
): CallParams {
  const [nb, nh, nl, nd] = q.shape as [number, number, number, number];
  const nhkv = k.shape[1]!;
  const ns = k.shape[2]!;
  const ndv = v?.shape[3] ?? 0;
  const [qs0, qs1, qs2] = q.strides as [number, number, number, number];
  const [ks0, ks1, ks2, ks3] = k.strides as [number, number, number, number];
  const { address: vb, strides: vs } = v ?? NONE;
  const { address: gb, strides: gs } = grad ?? NONE;
  const { address: ob, strides: os } = out ?? NONE;
  const { address: lb, strides: ls } = lse ?? NONE;
  const { address: pb, strides: ps } = pad ?? NONE;
  const dropping = attrs.training && attrs.dropoutRate > 0;
  const pack = {
    kb: k.address,
    ks2,
    ks3,
    vb,
    vs2: vs[2]!,
    vs3: vs[3]!,
    pb,
    ps1: ps[1]!,
    ns,
    nd,
    ndv,
    s0: 0,
    s1: ns,
    mode,
    dst: 0,
    scratch,
  };
  const block = {
    qb: q.address,
    qs2,
    gb,
    gs2: gs[2]!,
    ob,
    os2: os[2]!,
    lb,
    ls2: ls[2]!,
    i0: 0,
    br: 0,
    ns,
    nd,
    ndv,
    causal: attrs.causal ? 1 : 0,
    off: maskOffset(attrs.alignment, nl, ns),
    win: windowOf(attrs),
    scale: attrs.scale,
    dropping: dropping ? 1 : 0,
    mixedSeed: fmix32(attrs.dropoutSeed),
    threshold: dropoutThreshold(attrs.dropoutRate),
    keptScale: dropping ? Math.fround(1 / (1 - attrs.dropoutRate)) : 1,
    padded: pad === undefined ? 0 : 1,
    headRow: 0,
    anyBad: 0,
    fromBlock: 0,
    maxBlocks: ALL_BLOCKS,
    mode,
    out: dst.address,
    scratch,
    prog: 0,
    regs: 0,
    bi: 0,
    hi: 0,
    classes: 0,
    clsQB: 0,
    clsBlk: 0,
    clsH: 1,
    clsByB: 0,
    progAll: 0,
  };
  const run = {
    nb,
    nh,
    nhkv,
    nl,
    qs0,
    qs1,
    ks0,
    ks1,
    vs0: vs[0]!,
    vs1: vs[1]!,
    ps0: ps[0]!,
    gs0: gs[0]!,
    gs1: gs[1]!,
    os0: os[0]!,
    os1: os[1]!,
    ls0: ls[0]!,
    ls1: ls[1]!,
    b0: 0,
    b1: nb,
    g0: 0,
    g1: nhkv,
  };
  return { pack, block, run };
}
