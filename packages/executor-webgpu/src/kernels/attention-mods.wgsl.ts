// The score and mask modifications of the fused attention kernels (attention, attention-lse, attention-grad), per
// @attngraph/graph's attention-mods.ts: the expressions become WGSL functions (expr.wgsl.ts's generator) that the
// kernels call inside their streaming loops, so no [L, S] buffer exists. What the kernels call:
//   mod_keep(b, h, i, j)             the mask modification (true without one); evaluated before the score, so a key it
//                                    hides costs no dot product and its score (NaN or not) never counts
//   mod_score(raw, scale, b, h, i, j) s' = scoreMod(scale · raw, …): −∞ = hidden, NaN or +∞ = a NaN row; without a
//                                    score modification the plain kernels' rule (raw −∞ hidden, a NaN raw bad)
//   mod_dscore(raw, scale, b, h, i, j) scale · ∂s'/∂score (attention-grad), what dS' is multiplied by for q and k
// i is the query's row index with no alignment offset, h the query head (GQA: not the key's head). The gathered
// inputs the expressions read are bound as storage buffers MOD0, MOD1, … after the program's own; a program without
// modifications is the plain kernel, unchanged.
import {
  checkExprCached,
  compileExpr,
  derive,
  gatheredOfCall,
  inputsRead,
  treeSize,
  unprovedReads,
  type AttentionMods,
  type Expr,
} from "@attngraph/graph";
import { UnsupportedError } from "@attngraph/tensor";
import type { KernelContext } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import { attrsOf, optionalInput, type Call } from "./inputs.js";
import { hostGathered } from "./expr-host.js";
import { bindGathered, checkStorageLimit, exprWgsl } from "./expr.wgsl.js";
import type { Params } from "./shared.wgsl.js";
import { checkKeyPadding } from "./mask.wgsl.js";

export interface FusedMods {
  readonly scoreMod: Expr | null;
  readonly maskMod: Expr | null;
  /** d scoreMod / d score, for attention-grad (null otherwise, or without a score modification). */
  readonly dScore: Expr | null;
  /** The gathered inputs the expressions read, in slot order (an unread one is not bound). */
  readonly bound: readonly (readonly [string, GpuTensor])[];
  /** Identifies the generated WGSL (with the kernel's own key): the expressions and the bound names. */
  readonly key: string;
}

/** JSON of a checked expression, by its identity (a plan step's expression is checked once, then the same object). */
const jsonCache = new WeakMap<object, string>();
function jsonOf(e: Expr | null): string {
  if (e === null || typeof e !== "object") return JSON.stringify(e);
  let s = jsonCache.get(e);
  if (s === undefined) jsonCache.set(e, (s = JSON.stringify(e)));
  return s;
}

/** The most nodes a derivative may have (checkExpr's bound on any expression). */
const MAX_DERIVED = 10_000;
const derivatives = new WeakMap<object, Expr>();

function scoreDerivative(e: Expr, subject: string): Expr {
  if (typeof e !== "object") return derive(e, { kind: "score" });
  let d = derivatives.get(e);
  if (d === undefined) {
    d = derive(e, { kind: "score" });
    if (treeSize(d, MAX_DERIVED) > MAX_DERIVED)
      throw new UnsupportedError(
        `the derivative of ${subject} with respect to the score has more than ${MAX_DERIVED} nodes`,
        { subject },
      );
    derivatives.set(e, d);
  }
  return d;
}

/**
 * The call's modifications, checked against its gathered inputs (slots from `first` on), or undefined when it has none
 * (the plain kernel runs). `grad`: also the score derivative.
 */
export function fusedMods(call: Call, first: number, grad: boolean): FusedMods | undefined {
  const a = attrsOf<Required<AttentionMods>>(call);
  if (a.scoreMod === null && a.maskMod === null) return undefined;
  const gathered = gatheredOfCall(call, first, (slot) => optionalInput(call, slot));
  const inputs = new Map([...gathered].map(([n, t]) => [n, t.rank]));
  const scoreMod =
    a.scoreMod === null
      ? null
      : checkExprCached(a.scoreMod, { subject: `${call.node}.scoreMod`, role: "score", inputs });
  const maskMod =
    a.maskMod === null ? null : checkExprCached(a.maskMod, { subject: `${call.node}.maskMod`, role: "mask", inputs });
  const dScore = grad && scoreMod !== null ? scoreDerivative(scoreMod, `${call.node}.scoreMod`) : null;
  // The derivative reads what the expression reads (derive keeps the reads and their indices): nothing more to bind.
  const read = new Set<string>();
  for (const e of [scoreMod, maskMod]) if (e !== null) inputsRead(e, read);
  const bound = [...gathered].filter(([n]) => read.has(n));
  const key = `${jsonOf(scoreMod)}|${jsonOf(maskMod)}|${bound.map(([n]) => n).join(",")}`;
  return { scoreMod, maskMod, dScore, bound, key };
}

/** What a program adds for its modifications: storage names after its own, bound tensors, and the WGSL functions. */
export interface ModsBinding {
  readonly names: readonly string[];
  readonly inputs: readonly GpuTensor[];
  readonly wgsl: string;
}

/**
 * Binds `m` into a program with `own` storage buffers (its output included) whose params are `p` so far: the device's
 * storage-buffer limit and the params words are checked (UnsupportedError naming the node), then the views packed.
 */
export function bindMods(call: Call, gpu: KernelContext, m: FusedMods, p: Params, own: number): ModsBinding {
  checkStorageLimit(gpu.device, own, m.bound.length, call.node, `${call.kind} with modifications`);
  const gathered = bindGathered(p, m.bound, "MOD", call.node, `${call.kind} with modifications`);
  const at = "f32(b), f32(h), f32(i), f32(j)";
  const sig = "raw: f32, scale: f32, b: u32, h: u32, i: u32, j: u32";
  const parts: string[] = [];
  if (m.scoreMod !== null) parts.push(exprWgsl(m.scoreMod, "score_mod", gathered));
  if (m.maskMod !== null) parts.push(exprWgsl(m.maskMod, "mask_mod", gathered));
  if (m.dScore !== null) parts.push(exprWgsl(m.dScore, "score_mod_d", gathered));
  parts.push(
    `fn mod_keep(b: u32, h: u32, i: u32, j: u32) -> bool { return ${m.maskMod !== null ? `mask_mod(0.0, ${at})` : "true"}; }`,
  );
  parts.push(
    m.scoreMod !== null
      ? `fn mod_score(${sig}) -> f32 { return score_mod(scale * raw, ${at}); }`
      : // The plain kernels' rule: a raw score of −∞ hides the key, a NaN or +∞ one makes the row NaN.
        `fn mod_score(${sig}) -> f32 { if (is_neg_inf(raw)) { return neg_inf(); } if (is_bad(raw)) { return nan(); } return scale * raw; }`,
  );
  parts.push(
    `fn mod_dscore(${sig}) -> f32 { return ${m.dScore !== null ? `scale * score_mod_d(scale * raw, ${at})` : "scale"}; }`,
  );
  return { names: gathered.map((g) => g.binding), inputs: m.bound.map(([, t]) => t), wgsl: parts.join("\n") };
}

function usesScore(e: Expr): boolean {
  if (typeof e !== "object") return e === "score";
  return e.op === "input" ? e.index.some(usesScore) : e.args.some(usesScore);
}

/**
 * Checks on the host every read that bounds.ts cannot prove in range for these sizes, at every element [b, h, i, j] of
 * [B, H, L, S] (as the unfused chain's score-mod and mask-mod evaluate them, masked elements included): an out-of-range
 * read is the ExprIndexError cpu gives, before the dispatch. The derivative reads the same elements at the same
 * indices, under the same `where` choices, so its reads are covered. A score modification whose reads depend on the
 * score gets scale · q·k computed here (float32, the kernel's order of terms).
 */
export async function checkModReads(
  call: Call,
  gpu: KernelContext,
  m: FusedMods,
  q: GpuTensor,
  k: GpuTensor,
  scale: number,
): Promise<void> {
  const [B, H, L, D] = q.shape as [number, number, number, number];
  const [, Hkv, S] = k.shape as [number, number, number, number];
  const shapes = new Map(m.bound.map(([n, t]) => [n, t.shape]));
  const todo = (
    [
      [m.scoreMod, "scoreMod"],
      [m.maskMod, "maskMod"],
    ] as const
  ).filter(([e]) => e !== null && unprovedReads(e, { B, H, L, S }, shapes).length > 0) as [Expr, string][];
  if (todo.length === 0 || B * H * L * S === 0) return;
  const host = await hostGathered(gpu, new Map(m.bound));
  let score: (b: number, h: number, i: number, j: number) => number = () => 0;
  if (todo.some(([e, field]) => field === "scoreMod" && usesScore(e))) {
    const hq = (await gpu.hostValues(q)).contiguous().toFloat32Array();
    const hk = (await gpu.hostValues(k)).contiguous().toFloat32Array();
    const group = H / Hkv;
    score = (b, h, i, j) => {
      const qo = ((b * H + h) * L + i) * D;
      const ko = ((b * Hkv + Math.floor(h / group)) * S + j) * D;
      let raw = 0;
      for (let c = 0; c < D; c++) raw = Math.fround(hq[qo + c]! * hk[ko + c]! + raw); // fma: one rounding per term
      return Math.fround(scale * raw);
    };
  }
  for (const [e, field] of todo) {
    const f = compileExpr(e, host, `${call.node}.${field}`);
    const withScore = field === "scoreMod";
    for (let b = 0; b < B; b++)
      for (let h = 0; h < H; h++)
        for (let i = 0; i < L; i++) for (let j = 0; j < S; j++) f(withScore ? score(b, h, i, j) : 0, b, h, i, j);
  }
}

/**
 * What each fused attention kernel (attention, attention-lse, attention-grad) checks on the values before it encodes
 * anything, in this order: the key padding mask (checkKeyPadding), then the modifications' reads (checkModReads). Gives
 * the call's modifications (fusedMods, gathered inputs from slot `first`; `grad`: with the score derivative).
 */
export async function checkedMods(
  call: Call,
  gpu: KernelContext,
  x: { readonly q: GpuTensor; readonly k: GpuTensor; readonly pad: GpuTensor | undefined },
  scale: number,
  first: number,
  grad: boolean,
): Promise<FusedMods | undefined> {
  if (x.pad !== undefined) await checkKeyPadding(call, gpu, x.pad);
  const mods = fusedMods(call, first, grad);
  if (mods) await checkModReads(call, gpu, mods, x.q, x.k, scale);
  return mods;
}
