// attention: score → mask → softmax → dropout → weighted-sum fused in the module (FlashAttention-style streaming over
// key blocks with a running max and sum; key blocks a causal or window mask hides from a whole query block are
// skipped). Padding values are checked as the mask kernel checks them. The module does it in
// two resumable pieces (pack a kv head's keys, run key blocks of a query block): without chunks, one module call
// (`attentionRun`) loops over them in the module; with a signal and a big call, they are driven from here in chunks
// with a yield and a signal check between them (chunks.ts). Both make the same piece calls in the same order.
import { withCleanup, type AttentionAttrs } from "@attngraph/graph";
import { chunkSignal, chunkedKernel, runSteps } from "../chunks.js";
import type { WasmContext } from "../context.js";
import type { WasmValue } from "../value.js";
import {
  BLOCK_FIELDS,
  PACK_FIELDS,
  attentionBlock,
  attentionPack,
  attentionWhole,
  writeRunParams,
  type RunParams,
} from "./attention-params.js";
import { attrsOf, checkKeyPadding, fillingChunked, optionalInput, requireInputs } from "./adapter.js";
import { blockClassTable, type BlockClassTable } from "./attention-blocks.js";
import { callParams, type CallParams } from "./attention-call-params.js";
import { BQ, callSteps, type StepPieces } from "./attention-steps.js";
import {
  attachProgram,
  callMods,
  clearStatus,
  loadProgram,
  regsAfter,
  scratchWithRegs,
  throwIfFailed,
  type LoadedProgram,
} from "./attention-mods.js";

/**
 * Inputs: q [B, H, L, D], k [B, Hkv, S, D], v [B, Hkv, S, Dv], optional keyPaddingMask [B, S] → [B, H, L, Dv];
 * attrs { causal, window, alignment, scale, dropoutRate, dropoutSeed, training }. Weight [b, h, i, j] is dropped
 * exactly when the dropout kernel drops element ((b · H + h) · L + i) · S + j of the weights tensor. With a score or
 * mask modification (attrs scoreMod, maskMod, inputs; gathered inputs from slot 4), the module runs its program over
 * every score tile (attention-mods.ts); such a call never takes the decode path.
 */
export const attentionKernel = chunkedKernel((call, ctx) => {
  const [q0, k, v] = requireInputs(call, "q", "k", "v");
  const pad = optionalInput(call, 3, "keyPaddingMask");
  const attrs = attrsOf<AttentionAttrs>(call);
  const [nb, nh, nl, nd] = q0.shape as [number, number, number, number];
  const nhkv = k.shape[1]!;
  const ns = k.shape[2]!;
  const ndv = v.shape[3]!;
  if (pad !== undefined) checkKeyPadding(call, ctx, pad);
  const mods = callMods(call, 4, false);
  const out = ctx.output(call, [nb, nh, nl, ndv]);
  if (out.size === 0) return out;
  const signal = chunkSignal(call, ctx, nb * nh * nl * ns * (nd + ndv + EXP_WORK));
  const decode =
    mods === undefined &&
    decodes(attrs, nl, k, v, signal === undefined ? 0 : (nh / nhkv) * nl * ns * (nd + ndv + EXP_WORK), ctx.chunkWork);
  return fillingChunked(call, ctx, out, () => {
    // The module reads q's rows in place; a q strided along D is made dense first.
    const copied = q0.strides[3] === 1 || nd <= 1 ? undefined : ctx.dense(q0, `${call.node} (dense copy of q)`).value;
    let own: WasmValue | undefined;
    let loaded: LoadedProgram | undefined;
    let loadedAll: LoadedProgram | undefined; // the score modification alone, for blocks the mask keeps whole
    let classTable: BlockClassTable | undefined;
    const run = () => {
      if (decode) {
        const bytes = ctx.exports.attentionDecodeScratchBytes(ns);
        if (signal !== undefined) own = ctx.alloc([Math.ceil(bytes / 4)], `${call.node} (attention scratch)`);
        const scratch = own?.address ?? ctx.scratch(bytes, call.node);
        const params = callParams({ q: copied ?? q0, k, v, pad }, attrs, 0, out, scratch);
        if (signal === undefined) {
          // Split by the bytes of K and V it streams, as the matvec is (memory-bound: few multiply-adds per byte).
          const parts =
            ctx.threads > 1
              ? threadParts(ctx.threads, ctx.maxCalls, nb, nhkv, 4 * nb * nhkv * ns * (nd + ndv), ctx.parallelWork)
              : [];
          if (parts.length > 1) runThreaded(ctx, "attentionDecode", parts, params, bytes, call.node);
          else attentionWhole(ctx, "attentionDecode", ctx.params, params.pack, params.block, params.run);
          return undefined;
        }
        return runSteps(ctx, decodeSteps(ctx, params), signal, call.node);
      }
      if (mods !== undefined) loaded = loadProgram(ctx, mods, call.node);
      if (mods?.scoreOnly !== undefined) loadedAll = loadProgram(ctx, mods, call.node, mods.scoreOnly);
      const kernelBytes = ctx.exports.attentionScratchBytes(ns, nd, ndv);
      // With a modification each call's scratch ends with its programs' registers (attention-mods.ts; both programs
      // use the same area, so it fits the larger).
      const bytes = scratchWithRegs(
        kernelBytes,
        loadedAll !== undefined && loaded !== undefined && loadedAll.regsBytes > loaded.regsBytes ? loadedAll : loaded,
      );
      // In chunks the call owns its scratch: another kernel may take the shared one while this one waits.
      if (signal !== undefined) own = ctx.alloc([Math.ceil(bytes / 4)], `${call.node} (attention scratch)`);
      const scratch = own?.address ?? ctx.scratch(bytes, call.node);
      const params = callParams({ q: copied ?? q0, k, v, pad }, attrs, 0, out, scratch);
      const regsOf = (callScratch: number) => (loaded === undefined ? 0 : regsAfter(callScratch, kernelBytes));
      if (loaded !== undefined) {
        attachProgram(ctx, params.block, loaded, scratch, kernelBytes);
        params.block.progAll = loadedAll?.address ?? 0;
        classTable = blockClassTable(ctx, call, mods!, q0.shape, ns, attrs);
        if (classTable !== undefined) Object.assign(params.block, classTable.fields);
      }
      if (signal === undefined) {
        const parts =
          ctx.threads > 1
            ? threadParts(ctx.threads, ctx.maxCalls, nb, nhkv, nb * nh * nl * ns * (nd + ndv), ctx.parallelWork)
            : [];
        if (parts.length > 1) {
          const regsList = runThreaded(ctx, "attentionRun", parts, params, bytes, call.node, regsOf);
          if (mods !== undefined) throwIfFailed(ctx, mods, regsList);
        } else {
          attentionWhole(ctx, "attentionRun", ctx.params, params.pack, params.block, params.run);
          if (mods !== undefined) throwIfFailed(ctx, mods, [params.block.regs]);
        }
        return undefined;
      }
      const keysPerStep = Math.floor(ctx.chunkWork / (Math.min(nl, BQ) * (nd + ndv + EXP_WORK)));
      const pieces: StepPieces = {
        pack: attentionPack,
        block: attentionBlock,
        flush: undefined,
        packWork: nd + ndv,
        weightWork: nd + ndv + EXP_WORK,
      };
      return runSteps(ctx, callSteps(ctx, params, keysPerStep, pieces, mods), signal, call.node);
    };
    return withCleanup(run, () => {
      if (classTable) ctx.release(classTable.value);
      if (copied) ctx.release(copied);
      if (own) ctx.release(own);
      if (loaded) ctx.release(loaded.value);
      if (loadedAll) ctx.release(loadedAll.value);
    });
  });
});

/**
 * Most query rows a call may have to take the module's decode path (`attentionDecode`: K and V read in place, one
 * query row at a time, nothing packed) instead of packing every key and value for the 4-row tile. Measured (Node 20,
 * 1 thread, H 12, D 64, S 129 to 1025, README "Speed"): the decode path is 2× to 16× faster up to L = 16, about even
 * at 32, slower from 64 on.
 */
export const DECODE_ROWS = 16;

/**
 * Whether a call takes `attentionDecode`: at most DECODE_ROWS query rows, no dropout, K and V with unit stride along
 * their last axis (any other strides), and, for a chunked call, one kv head's work within a chunk (the decode path
 * steps per kv head).
 */
function decodes(
  attrs: AttentionAttrs,
  nl: number,
  k: WasmValue,
  v: WasmValue,
  kvHeadWork: number,
  chunkWork: number,
): boolean {
  if (nl > DECODE_ROWS || (attrs.training && attrs.dropoutRate > 0)) return false;
  if (!(k.strides[3] === 1 || k.shape[3]! <= 1) || !(v.strides[3] === 1 || v.shape[3]! <= 1)) return false;
  return kvHeadWork <= chunkWork;
}

/**
 * The decode path as steps for a chunked call: one `attentionDecode` per batch and kv head (its group of query heads,
 * every query row), each yielding its work; the rows computed are those of the whole call, bit for bit.
 */
function* decodeSteps(ctx: WasmContext, params: CallParams): Generator<number, void, void> {
  const { pack, block, run } = params;
  const { nb, nh, nhkv, nl, qs0, qs1, ks0, ks1, vs0, vs1, ps0 } = run;
  const group = nh / nhkv;
  const kb = pack.kb,
    vb = pack.vb,
    pb = pack.pb,
    qb = block.qb;
  const one: RunParams = { ...run, nb: 1, nh: group, nhkv: 1, b0: 0, b1: 1, g0: 0, g1: 1 };
  const work = group * nl * pack.ns * (pack.nd + pack.ndv + EXP_WORK);
  for (let b = 0; b < nb; b++) {
    for (let g = 0; g < nhkv; g++) {
      pack.kb = kb + (b * ks0 + g * ks1) * 4;
      pack.vb = vb + (b * vs0 + g * vs1) * 4;
      pack.pb = pb === 0 ? 0 : pb + b * ps0 * 4;
      block.qb = qb + (b * qs0 + g * group * qs1) * 4;
      block.headRow = (b * nh + g * group) * nl;
      attentionWhole(ctx, "attentionDecode", ctx.params, pack, block, one);
      yield work;
    }
  }
}

/**
 * Work of one weight beyond its two products (mask test, vector exp, running max and sum) in multiply-adds of the SIMD
 * tile: measured ≈ 40 to 60 (D = 64 to 4, Node 20).
 */
const EXP_WORK = 60;

/**
 * A threaded call's shares as [b0, b1, g0, g1] (batches and kv heads of attentionRun or attentionDecode), at most
 * `maxCalls`, of equal size where a count between `threads` and `maxCalls` divides them: by batch when there are at
 * least as many batches as threads (or one kv head), else by kv head in every batch; one share when the call's `work`
 * (multiply-adds of its scores and weighted sums; for the decode path, bytes of K and V read) is below `minWork`.
 */
export function threadParts(
  threads: number,
  maxCalls: number,
  nb: number,
  nhkv: number,
  work: number,
  minWork: number,
): [number, number, number, number][] {
  if (threads <= 1 || work < minWork) return [[0, nb, 0, nhkv]];
  const byBatch = nb >= threads || nhkv === 1;
  const count = byBatch ? nb : nhkv;
  // Equal shares (12 kv heads in 6 calls of 2, not 8 of 1 or 2) unless that leaves fewer calls than threads.
  let parts = Math.min(maxCalls, count);
  while (count % parts !== 0 && parts > threads) parts--;
  if (parts <= 1) return [[0, nb, 0, nhkv]];
  return Array.from({ length: parts }, (_, t) => {
    const lo = Math.floor((t * count) / parts);
    const hi = Math.floor(((t + 1) * count) / parts);
    return byBatch ? [lo, hi, 0, nhkv] : [0, nb, lo, hi];
  });
}

/**
 * attentionRun or attentionDecode over the threads, share i with its own scratch and params area: each share writes
 * its own heads' rows, computed as in one whole call (the same keys in the same order, dropout by the same element
 * indices). With a modification each share has its own register area (`regsOf` its scratch); returns them all.
 */
function runThreaded(
  ctx: WasmContext,
  name: "attentionRun" | "attentionDecode",
  parts: readonly [number, number, number, number][],
  params: CallParams,
  scratchBytes: number,
  node: string,
  regsOf: (scratch: number) => number = () => 0,
): number[] {
  const regsList: number[] = [];
  const calls = parts.map(([b0, b1, g0, g1], i) => {
    const scratch = i === 0 ? params.pack.scratch : ctx.callScratch(i, scratchBytes, node);
    const regs = params.block.prog === 0 ? 0 : regsOf(scratch);
    if (regs !== 0) {
      clearStatus(ctx, regs);
      regsList.push(regs);
    }
    const run = { ...params.run, b0, b1, g0, g1 };
    const args = writeRunParams(
      ctx,
      ctx.callParams(i),
      PACK_FIELDS,
      { ...params.pack, scratch },
      BLOCK_FIELDS,
      { ...params.block, scratch, regs },
      run,
    );
    return { name, args };
  });
  ctx.parallel(calls);
  return regsList;
}
