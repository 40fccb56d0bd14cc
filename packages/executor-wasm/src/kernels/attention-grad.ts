// The fused attention backward: attention-lse (one number per query row: the log of the forward softmax's
// denominator, max included) and attention-grad (dq, dk or dv from grad, out and that lse, the weights recomputed per
// block; the [L, S] weights never exist). Key padding values are checked as the forward attention checks them (the
// rest of a call is its declaration's, checked by checkCall). The module (assembly/attention-grad.ts) streams over key blocks like the
// forward fused attention, in resumable pieces: without chunks, one module call (`attentionGradRun`) loops over them
// in the module; with a signal and a big call, they are driven from here in chunks with a yield and a signal check
// between them (chunks.ts). Both make the same piece calls in the same order.
import { attentionInputGrad, withCleanup, type AttentionGradAttrs, type AttentionLseAttrs } from "@attngraph/graph";
import { chunkSignal, chunkedKernel, runSteps } from "../chunks.js";
import type { WasmContext } from "../context.js";
import type { WasmValue } from "../value.js";
import {
  GRAD_MODE,
  attentionGradBlock,
  attentionGradFlush,
  attentionGradPack,
  attentionGradRun,
  type GradMode,
} from "./attention-grad-params.js";
import { ALL_BLOCKS, callParams, type CallParams } from "./attention-call-params.js";
import { attrsOf, checkKeyPadding, fillingChunked, optionalInput, requireInput, type Call } from "./adapter.js";
import { gatheredValues, view, views } from "./score-mod.js";
import {
  callMods,
  clearStatus,
  failed,
  loadProgram,
  regsAfter,
  scratchWithRegs,
  throwIfFailed,
  type CallMods,
  type LoadedProgram,
} from "./attention-mods.js";

/** Query rows and keys per block of the module's backward (assembly/attention-grad.ts). */
const BQ = 64;
const BK = 64;
/** Work of one weight beyond its products (mask test, vector exp, dropout bits), in multiply-adds of the SIMD tile. */
const EXP_WORK = 60;

interface Problem {
  readonly q: WasmValue;
  readonly k: WasmValue;
  readonly v: WasmValue | undefined;
  readonly out: WasmValue | undefined;
  readonly grad: WasmValue | undefined;
  readonly lse: WasmValue | undefined;
  readonly pad: WasmValue | undefined;
  readonly attrs: AttentionLseAttrs & {
    readonly dropoutRate: number;
    readonly dropoutSeed: number;
    readonly training: boolean;
  };
  readonly mode: GradMode;
  /** The call's score and mask modifications (attention-mods.ts), if any. */
  readonly mods: CallMods | undefined;
}

/**
 * Inputs: q [B, H, L, D], k [B, Hkv, S, D], optional keyPaddingMask [B, S] → lse [B, H, L]; attrs { causal, window,
 * alignment, scale }. A row that sees no key gets −∞.
 */
export const attentionLseKernel = chunkedKernel((call, ctx) => {
  const q = requireInput(call, 0, "q");
  const k = requireInput(call, 1, "k");
  const pad = optionalInput(call, 2, "keyPaddingMask");
  const attrs = attrsOf<AttentionLseAttrs>(call);
  if (pad !== undefined) checkKeyPadding(call, ctx, pad);
  const [nb, nh, nl] = q.shape as [number, number, number, number];
  const out = ctx.output(call, [nb, nh, nl]);
  // Field by field, not `{ ...attrs, dropoutRate: 0, … }`: a spread plus new fields costs microseconds a call in Node 20.
  const noDropout = {
    causal: attrs.causal,
    window: attrs.window,
    alignment: attrs.alignment,
    scale: attrs.scale,
    dropoutRate: 0,
    dropoutSeed: 0,
    training: false,
  };
  const problem: Problem = {
    q,
    k,
    v: undefined,
    out: undefined,
    grad: undefined,
    lse: undefined,
    pad,
    attrs: noDropout,
    mode: GRAD_MODE.lse,
    mods: callMods(call, 3, false),
  };
  return run(call, ctx, problem, out);
});

/**
 * Inputs: q [B, H, L, D], k [B, Hkv, S, D], v [B, Hkv, S, Dv], out and grad [B, H, L, Dv], lse [B, H, L], optional
 * keyPaddingMask [B, S]; attrs { causal, window, alignment, scale, dropoutRate, dropoutSeed, training, wrt } → dq
 * [B, H, L, D], dk [B, Hkv, S, D] or dv [B, Hkv, S, Dv]. Weight [b, h, i, j] is dropped exactly when the forward drops it.
 */
export const attentionGradKernel = chunkedKernel((call, ctx) => {
  const q = requireInput(call, 0, "q");
  const k = requireInput(call, 1, "k");
  const v = requireInput(call, 2, "v");
  const o = requireInput(call, 3, "out");
  const g = requireInput(call, 4, "grad");
  const lse = requireInput(call, 5, "lse");
  const pad = optionalInput(call, 6, "keyPaddingMask");
  const attrs = attrsOf<AttentionGradAttrs>(call);
  if (pad !== undefined) checkKeyPadding(call, ctx, pad);
  if (attrs.wrt !== "q" && attrs.wrt !== "k" && attrs.wrt !== "v")
    return gatheredGrad(call, ctx, { q, k, v, out: o, grad: g, lse, pad }, attrs);
  const mods = callMods(call, 7, attrs.wrt === "q" || attrs.wrt === "k");
  const shape = attrs.wrt === "q" ? q.shape : attrs.wrt === "k" ? k.shape : v.shape;
  const out = ctx.output(call, shape);
  return run(
    call,
    ctx,
    { q, k, v, out: o, grad: g, lse, pad, attrs, mode: GRAD_MODE[attrs.wrt as "q" | "k" | "v"], mods },
    out,
  );
});

/** Runs `p` into `dst`: rows read in place need unit stride along their last axis (a copy first otherwise). */
function run(call: Call, ctx: WasmContext, p: Problem, dst: WasmValue): WasmValue | Promise<WasmValue> {
  if (dst.size === 0) return dst;
  const [nb, nh, nl, nd] = p.q.shape as [number, number, number, number];
  const ns = p.k.shape[2]!;
  const ndv = p.v?.shape[3] ?? 0;
  const work = nb * nh * nl * ns * (productWork(p.mode, nd, ndv) + EXP_WORK);
  const signal = chunkSignal(call, ctx, work);
  return fillingChunked(call, ctx, dst, () => {
    const copies: WasmValue[] = [];
    const rows = (x: WasmValue | undefined, name: string): WasmValue | undefined => {
      if (x === undefined || x.strides[3] === 1 || x.shape[3]! <= 1) return x;
      const c = ctx.dense(x, `${call.node} (dense copy of ${name})`).value;
      copies.push(c);
      return c;
    };
    let own: WasmValue | undefined;
    let loaded: LoadedProgram | undefined;
    const go = () => {
      const out = p.mode === GRAD_MODE.v ? p.out : rows(p.out, "out");
      const dense: Problem = {
        q: rows(p.q, "q")!,
        k: p.k,
        v: p.v,
        out,
        grad: rows(p.grad, "grad"),
        lse: p.lse,
        pad: p.pad,
        attrs: p.attrs,
        mode: p.mode,
        mods: p.mods,
      };
      if (p.mods !== undefined) loaded = loadProgram(ctx, p.mods, call.node);
      const kernelBytes = ctx.exports.attentionGradScratchBytes(ns, nd, ndv, p.mode);
      // With a modification the scratch ends with its program's registers (attention-mods.ts).
      const bytes = scratchWithRegs(kernelBytes, loaded);
      // In chunks the call owns its scratch: another kernel may take the shared one while this one waits.
      if (signal !== undefined) own = ctx.alloc([Math.ceil(bytes / 4)], `${call.node} (attention backward scratch)`);
      const scratch = own?.address ?? ctx.scratch(bytes, call.node);
      const params = callParams(dense, dense.attrs, dense.mode, dst, scratch);
      if (loaded !== undefined) {
        params.block.prog = loaded.address;
        params.block.regs = regsAfter(scratch, kernelBytes);
        clearStatus(ctx, params.block.regs);
      }
      if (signal === undefined) {
        attentionGradRun(ctx, ctx.params, params.pack, params.block, params.run);
        if (p.mods !== undefined) throwIfFailed(ctx, p.mods, [params.block.regs]);
        return undefined;
      }
      const perKey = Math.min(nl, BQ) * (productWork(p.mode, nd, ndv) + EXP_WORK);
      const keysPerStep = Math.floor(ctx.chunkWork / perKey);
      return runSteps(ctx, steps(ctx, params, keysPerStep, p.mods), signal, call.node);
    };
    return withCleanup(go, () => {
      for (const c of copies) ctx.release(c);
      if (own) ctx.release(own);
      if (loaded) ctx.release(loaded.value);
    });
  });
}

/** Multiply-adds of the products per weight: q·k, and grad·v and the gradient's own where the mode needs them. */
function productWork(mode: GradMode, nd: number, ndv: number): number {
  return mode === GRAD_MODE.lse ? nd : mode === GRAD_MODE.v ? nd + ndv : 2 * nd + ndv;
}

/**
 * The module's backward as steps, for a chunked call: per batch and kv head, its keys packed `keysPerStep` at a time;
 * per query head of the group and query block, `keysPerStep` keys' worth of whole key blocks at a time; wrt k and v,
 * the kv head's rows written at its end. Each step yields its work (an upper bound). With whole steps these are the
 * calls `attentionGradRun` makes, in the same order. With a modification, an index error ends the call at the block
 * that met it.
 */
function* steps(
  ctx: WasmContext,
  params: CallParams,
  keysPerStep: number,
  mods?: CallMods,
): Generator<number, void, void> {
  const { pack, block, run } = params;
  const { nb, nh, nhkv, nl, qs0, qs1, ks0, ks1, vs0, vs1, ps0, gs0, gs1, os0, os1, ls0, ls1 } = run;
  const { ns, nd, ndv } = pack;
  const mode = pack.mode as GradMode;
  const group = nh / nhkv;
  const kb = pack.kb,
    vb = pack.vb,
    pb = pack.pb,
    qb = block.qb,
    gb = block.gb,
    ob = block.ob,
    lb = block.lb;
  const perKv = mode === GRAD_MODE.k || mode === GRAD_MODE.v;
  const flushWidth = mode === GRAD_MODE.v ? ndv : nd;
  const work = productWork(mode, nd, ndv) + EXP_WORK;
  // Packing ranges start on whole 8-key panels; block ranges are whole key blocks.
  const packStep = keysPerStep === Infinity ? Math.max(ns, 1) : Math.max(8, Math.floor(keysPerStep / 8) * 8);
  const blocksPerStep = keysPerStep === Infinity ? ALL_BLOCKS : Math.max(1, Math.floor(keysPerStep / BK));
  block.maxBlocks = blocksPerStep;
  const rows = (base: number, b: number, h: number, s0: number, s1: number) =>
    base === 0 ? 0 : base + (b * s0 + h * s1) * 4;
  for (let b = 0; b < nb; b++) {
    for (let g = 0; g < nhkv; g++) {
      pack.kb = kb + (b * ks0 + g * ks1) * 4;
      pack.vb = rows(vb, b, g, vs0, vs1);
      pack.pb = pb === 0 ? 0 : pb + b * ps0 * 4;
      pack.dst = perKv ? block.out + (b * nhkv + g) * ns * flushWidth * 4 : 0;
      let anyBad = 0;
      for (let s0 = 0; s0 < ns; s0 += packStep) {
        pack.s0 = s0;
        pack.s1 = Math.min(ns, s0 + packStep);
        anyBad |= attentionGradPack(ctx, ctx.params, pack);
        yield (pack.s1 - s0) * (2 * nd + ndv);
      }
      block.anyBad = anyBad;
      for (let h = g * group; h < (g + 1) * group; h++) {
        block.qb = qb + (b * qs0 + h * qs1) * 4;
        block.gb = rows(gb, b, h, gs0, gs1);
        block.ob = rows(ob, b, h, os0, os1);
        block.lb = rows(lb, b, h, ls0, ls1);
        block.headRow = (b * nh + h) * nl;
        block.bi = b;
        block.hi = h;
        for (let i0 = 0; i0 < nl; i0 += BQ) {
          block.i0 = i0;
          block.br = Math.min(BQ, nl - i0);
          for (let from = 0; ; from += blocksPerStep) {
            block.fromBlock = from;
            const left = attentionGradBlock(ctx, ctx.params, block);
            if (mods !== undefined && failed(ctx, block.regs)) throwIfFailed(ctx, mods, [block.regs]);
            yield Math.min(blocksPerStep, Math.ceil(ns / BK) + 1) * block.br * BK * work;
            if (left === 0) break;
          }
        }
      }
      if (perKv && ns > 0) {
        pack.s0 = 0;
        pack.s1 = ns;
        attentionGradFlush(ctx, ctx.params, pack);
        yield ns * flushWidth;
      }
    }
  }
}

/**
 * attention-grad wrt a gathered slot (a learnable bias table): @attngraph/graph's shared host loop over views of the
 * module's memory (taken after the output is allocated, so no growth detaches them), stored into the output.
 */
function gatheredGrad(
  call: Call,
  ctx: WasmContext,
  x: Record<"q" | "k" | "v" | "out" | "grad" | "lse", WasmValue> & { readonly pad: WasmValue | undefined },
  attrs: AttentionGradAttrs,
): WasmValue | Promise<WasmValue> {
  const gathered = gatheredValues(call, 7);
  // The shape rule held wrt to a slot the `inputs` attribute names.
  const target = gathered.get(attrs.inputs![Number(attrs.wrt.slice(1))]!)!;
  const out = ctx.output(call, target.shape);
  return fillingChunked(call, ctx, out, () => {
    const v = (t: WasmValue) => view(ctx, t);
    const y = attentionInputGrad(
      { q: v(x.q), k: v(x.k), v: v(x.v), out: v(x.out), grad: v(x.grad), lse: v(x.lse), pad: x.pad && v(x.pad) },
      attrs,
      views(ctx, gathered),
      call.node,
    );
    ctx.f32().set(y, out.address / 4);
  });
}
