// The fused attention's module pieces as steps for a chunked call, written once for the forward (attention.ts) and the
// backward (attention-grad.ts): per batch and kv head, its keys packed `keysPerStep` at a time; per query head of the
// group and query block, `keysPerStep` keys' worth of whole key blocks at a time; with a flush (the backward wrt k and
// v), the kv head's rows written at its end. Each step yields its work (an upper bound). With whole steps these are the
// calls `attentionRun` and `attentionGradRun` make in the module, in the same order. With a modification, an index
// error ends the call at the block that met it.
import type { WasmContext } from "../context.js";
import { ALL_BLOCKS, type CallParams } from "./attention-call-params.js";
import { failed, throwIfFailed, type CallMods } from "./attention-mods.js";

/** Query rows and keys per block of the module's attention and its backward (assembly/attention.ts, attention-grad.ts). */
export const BQ = 64;
export const BK = 64;

/** One direction's pieces (attention-params.ts, attention-grad-params.ts) and their work in multiply-adds. */
export interface StepPieces {
  /** Packs keys [s0, s1) of one kv head; 1 when a row there holds a NaN or ±∞. */
  readonly pack: (ctx: WasmContext, params: number, p: CallParams["pack"]) => number;
  /** Runs key blocks of one query block; the key blocks still to run, 0 when done. */
  readonly block: (ctx: WasmContext, params: number, p: CallParams["block"]) => number;
  /** Writes a kv head's accumulated rows (`width` floats a key) at its end: the backward wrt k or v; else absent. */
  readonly flush:
    | {
        readonly run: (ctx: WasmContext, params: number, p: CallParams["pack"]) => void;
        readonly width: number;
      }
    | undefined;
  /** Work per key packed and per weight of a block, in multiply-adds of the SIMD tile. */
  readonly packWork: number;
  readonly weightWork: number;
}

/** The steps of a whole call with `params` (callParams), updating its per-head fields in place. */
export function* callSteps(
  ctx: WasmContext,
  { pack, block, run }: CallParams,
  keysPerStep: number,
  pieces: StepPieces,
  mods: CallMods | undefined,
): Generator<number, void, void> {
  const { nb, nh, nhkv, nl, qs0, qs1, ks0, ks1, vs0, vs1, ps0, gs0, gs1, os0, os1, ls0, ls1 } = run;
  const { ns } = pack;
  const { flush } = pieces;
  const group = nh / nhkv;
  const kb = pack.kb,
    vb = pack.vb,
    pb = pack.pb,
    qb = block.qb,
    gb = block.gb,
    ob = block.ob,
    lb = block.lb;
  // Packing ranges start on whole 8-key panels; block ranges are whole key blocks.
  const packStep = keysPerStep === Infinity ? Math.max(ns, 1) : Math.max(8, Math.floor(keysPerStep / 8) * 8);
  const blocksPerStep = keysPerStep === Infinity ? ALL_BLOCKS : Math.max(1, Math.floor(keysPerStep / BK));
  block.maxBlocks = blocksPerStep;
  // A tensor the call lacks (address 0) stays 0.
  const rows = (base: number, b: number, h: number, s0: number, s1: number) =>
    base === 0 ? 0 : base + (b * s0 + h * s1) * 4;
  for (let b = 0; b < nb; b++) {
    for (let g = 0; g < nhkv; g++) {
      pack.kb = kb + (b * ks0 + g * ks1) * 4;
      pack.vb = rows(vb, b, g, vs0, vs1);
      pack.pb = pb === 0 ? 0 : pb + b * ps0 * 4;
      pack.dst = flush === undefined ? 0 : block.out + (b * nhkv + g) * ns * flush.width * 4;
      let anyBad = 0;
      for (let s0 = 0; s0 < ns; s0 += packStep) {
        pack.s0 = s0;
        pack.s1 = Math.min(ns, s0 + packStep);
        anyBad |= pieces.pack(ctx, ctx.params, pack);
        yield (pack.s1 - s0) * pieces.packWork;
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
          const blockWork = block.br * BK * pieces.weightWork;
          for (let from = 0; ; from += blocksPerStep) {
            block.fromBlock = from;
            const left = pieces.block(ctx, ctx.params, block);
            if (mods !== undefined && failed(ctx, block.regs)) throwIfFailed(ctx, mods, [block.regs]);
            yield Math.min(blocksPerStep, Math.ceil(ns / BK) + 1) * blockWork;
            if (left === 0) break;
          }
        }
      }
      if (flush !== undefined && ns > 0) {
        pack.s0 = 0;
        pack.s1 = ns;
        flush.run(ctx, ctx.params, pack);
        yield ns * flush.width;
      }
    }
  }
}
