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
import { callParams } from "./attention-call-params.js";
import { BQ, callSteps, type StepPieces } from "./attention-steps.js";
import { attrsOf, checkKeyPadding, fillingChunked, optionalInput, requireInputs, type Call } from "./adapter.js";
import { gatheredValues, view, views } from "./score-mod.js";
import {
  attachProgram,
  callMods,
  loadProgram,
  scratchWithRegs,
  throwIfFailed,
  type CallMods,
  type LoadedProgram,
} from "./attention-mods.js";

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
  const [q, k] = requireInputs(call, "q", "k");
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
  const [q, k, v, o, g, lse] = requireInputs(call, "q", "k", "v", "out", "grad", "lse");
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
      if (loaded !== undefined) attachProgram(ctx, params.block, loaded, scratch, kernelBytes);
      if (signal === undefined) {
        attentionGradRun(ctx, ctx.params, params.pack, params.block, params.run);
        if (p.mods !== undefined) throwIfFailed(ctx, p.mods, [params.block.regs]);
        return undefined;
      }
      const perKey = Math.min(nl, BQ) * (productWork(p.mode, nd, ndv) + EXP_WORK);
      const keysPerStep = Math.floor(ctx.chunkWork / perKey);
      const pieces: StepPieces = {
        pack: attentionGradPack,
        block: attentionGradBlock,
        flush:
          p.mode === GRAD_MODE.k || p.mode === GRAD_MODE.v
            ? { run: attentionGradFlush, width: p.mode === GRAD_MODE.v ? ndv : nd }
            : undefined,
        packWork: 2 * nd + ndv,
        weightWork: productWork(p.mode, nd, ndv) + EXP_WORK,
      };
      return runSteps(ctx, callSteps(ctx, params, keysPerStep, pieces, p.mods), signal, call.node);
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
