// The params blocks' layouts as the compiler lays them out, for the host's tests (src/kernels/params-blocks.test.ts,
// attention-params.test.ts): each export writes its blocks' field offsets in declaration order (i32 each) at dst and
// returns their count, so a field added, removed or moved on one side only fails there. One file, so the kernels' own
// files hold only what they run.
import { OptimParams } from "./adam";
import { PairParams } from "./add";
import { GradBlockParams, GradPackParams } from "./attention-grad";
import { BlockParams, PackParams, RunParams } from "./attention";
import { TargetParams } from "./cross-entropy";
import { LookupParams } from "./embedding";
import { AffineParams } from "./layer-norm";
import { MaskParams } from "./mask";
import { MatmulParams } from "./matmul";
import { Rows4Params } from "./position";

/** Stores `offset` as the n-th i32 at dst. */
@inline function put(dst: usize, n: i32, offset: usize): void {
  store<i32>(dst + (<usize>n << 2), <i32>offset);
}

/** MatmulParams' field offsets. */
export function matmulParamsLayout(dst: usize): i32 {
  let n: i32 = 0;
  put(dst, n++, offsetof<MatmulParams>("m"));
  put(dst, n++, offsetof<MatmulParams>("n"));
  put(dst, n++, offsetof<MatmulParams>("k"));
  put(dst, n++, offsetof<MatmulParams>("a"));
  put(dst, n++, offsetof<MatmulParams>("lda"));
  put(dst, n++, offsetof<MatmulParams>("b"));
  put(dst, n++, offsetof<MatmulParams>("brs"));
  put(dst, n++, offsetof<MatmulParams>("bcs"));
  put(dst, n++, offsetof<MatmulParams>("c"));
  put(dst, n++, offsetof<MatmulParams>("ldc"));
  put(dst, n++, offsetof<MatmulParams>("bias"));
  put(dst, n++, offsetof<MatmulParams>("biasStride"));
  put(dst, n++, offsetof<MatmulParams>("scratch"));
  put(dst, n++, offsetof<MatmulParams>("j0"));
  put(dst, n++, offsetof<MatmulParams>("j1"));
  return n;
}

/** MaskParams' field offsets. */
export function maskParamsLayout(dst: usize): i32 {
  let n: i32 = 0;
  put(dst, n++, offsetof<MaskParams>("scale"));
  put(dst, n++, offsetof<MaskParams>("src"));
  put(dst, n++, offsetof<MaskParams>("s0"));
  put(dst, n++, offsetof<MaskParams>("s1"));
  put(dst, n++, offsetof<MaskParams>("s2"));
  put(dst, n++, offsetof<MaskParams>("s3"));
  put(dst, n++, offsetof<MaskParams>("pad"));
  put(dst, n++, offsetof<MaskParams>("ps0"));
  put(dst, n++, offsetof<MaskParams>("ps1"));
  put(dst, n++, offsetof<MaskParams>("user"));
  put(dst, n++, offsetof<MaskParams>("u0"));
  put(dst, n++, offsetof<MaskParams>("u1"));
  put(dst, n++, offsetof<MaskParams>("u2"));
  put(dst, n++, offsetof<MaskParams>("u3"));
  put(dst, n++, offsetof<MaskParams>("bias"));
  put(dst, n++, offsetof<MaskParams>("b0"));
  put(dst, n++, offsetof<MaskParams>("b1"));
  put(dst, n++, offsetof<MaskParams>("b2"));
  put(dst, n++, offsetof<MaskParams>("b3"));
  put(dst, n++, offsetof<MaskParams>("nb"));
  put(dst, n++, offsetof<MaskParams>("nh"));
  put(dst, n++, offsetof<MaskParams>("nl"));
  put(dst, n++, offsetof<MaskParams>("ns"));
  put(dst, n++, offsetof<MaskParams>("causal"));
  put(dst, n++, offsetof<MaskParams>("off"));
  put(dst, n++, offsetof<MaskParams>("win"));
  put(dst, n++, offsetof<MaskParams>("dst"));
  return n;
}

/** Rows4Params' field offsets. */
export function rows4ParamsLayout(dst: usize): i32 {
  let n: i32 = 0;
  put(dst, n++, offsetof<Rows4Params>("src"));
  put(dst, n++, offsetof<Rows4Params>("s0"));
  put(dst, n++, offsetof<Rows4Params>("s1"));
  put(dst, n++, offsetof<Rows4Params>("s2"));
  put(dst, n++, offsetof<Rows4Params>("s3"));
  put(dst, n++, offsetof<Rows4Params>("nb"));
  put(dst, n++, offsetof<Rows4Params>("nh"));
  put(dst, n++, offsetof<Rows4Params>("nl"));
  return n;
}

/** RunParams' (attention.ts; the attention and attention-grad runs share it) field offsets. */
export function runParamsLayout(dst: usize): i32 {
  let n: i32 = 0;
  put(dst, n++, offsetof<RunParams>("nb"));
  put(dst, n++, offsetof<RunParams>("nh"));
  put(dst, n++, offsetof<RunParams>("nhkv"));
  put(dst, n++, offsetof<RunParams>("nl"));
  put(dst, n++, offsetof<RunParams>("qs0"));
  put(dst, n++, offsetof<RunParams>("qs1"));
  put(dst, n++, offsetof<RunParams>("ks0"));
  put(dst, n++, offsetof<RunParams>("ks1"));
  put(dst, n++, offsetof<RunParams>("vs0"));
  put(dst, n++, offsetof<RunParams>("vs1"));
  put(dst, n++, offsetof<RunParams>("ps0"));
  put(dst, n++, offsetof<RunParams>("gs0"));
  put(dst, n++, offsetof<RunParams>("gs1"));
  put(dst, n++, offsetof<RunParams>("os0"));
  put(dst, n++, offsetof<RunParams>("os1"));
  put(dst, n++, offsetof<RunParams>("ls0"));
  put(dst, n++, offsetof<RunParams>("ls1"));
  put(dst, n++, offsetof<RunParams>("b0"));
  put(dst, n++, offsetof<RunParams>("b1"));
  put(dst, n++, offsetof<RunParams>("g0"));
  put(dst, n++, offsetof<RunParams>("g1"));
  return n;
}

/** PackParams' then BlockParams' then RunParams' (attention.ts) field offsets. */
export function attentionParamsLayout(dst: usize): i32 {
  let n: i32 = 0;
  put(dst, n++, offsetof<PackParams>("kb"));
  put(dst, n++, offsetof<PackParams>("ks2"));
  put(dst, n++, offsetof<PackParams>("ks3"));
  put(dst, n++, offsetof<PackParams>("vb"));
  put(dst, n++, offsetof<PackParams>("vs2"));
  put(dst, n++, offsetof<PackParams>("vs3"));
  put(dst, n++, offsetof<PackParams>("pb"));
  put(dst, n++, offsetof<PackParams>("ps1"));
  put(dst, n++, offsetof<PackParams>("ns"));
  put(dst, n++, offsetof<PackParams>("nd"));
  put(dst, n++, offsetof<PackParams>("ndv"));
  put(dst, n++, offsetof<PackParams>("s0"));
  put(dst, n++, offsetof<PackParams>("s1"));
  put(dst, n++, offsetof<PackParams>("scratch"));
  put(dst, n++, offsetof<BlockParams>("qb"));
  put(dst, n++, offsetof<BlockParams>("qs2"));
  put(dst, n++, offsetof<BlockParams>("i0"));
  put(dst, n++, offsetof<BlockParams>("br"));
  put(dst, n++, offsetof<BlockParams>("ns"));
  put(dst, n++, offsetof<BlockParams>("nd"));
  put(dst, n++, offsetof<BlockParams>("ndv"));
  put(dst, n++, offsetof<BlockParams>("causal"));
  put(dst, n++, offsetof<BlockParams>("off"));
  put(dst, n++, offsetof<BlockParams>("win"));
  put(dst, n++, offsetof<BlockParams>("scale"));
  put(dst, n++, offsetof<BlockParams>("dropping"));
  put(dst, n++, offsetof<BlockParams>("mixedSeed"));
  put(dst, n++, offsetof<BlockParams>("threshold"));
  put(dst, n++, offsetof<BlockParams>("keptScale"));
  put(dst, n++, offsetof<BlockParams>("padded"));
  put(dst, n++, offsetof<BlockParams>("headRow"));
  put(dst, n++, offsetof<BlockParams>("anyBad"));
  put(dst, n++, offsetof<BlockParams>("fromBlock"));
  put(dst, n++, offsetof<BlockParams>("maxBlocks"));
  put(dst, n++, offsetof<BlockParams>("out"));
  put(dst, n++, offsetof<BlockParams>("scratch"));
  put(dst, n++, offsetof<BlockParams>("prog"));
  put(dst, n++, offsetof<BlockParams>("regs"));
  put(dst, n++, offsetof<BlockParams>("bi"));
  put(dst, n++, offsetof<BlockParams>("hi"));
  put(dst, n++, offsetof<BlockParams>("classes"));
  put(dst, n++, offsetof<BlockParams>("clsQB"));
  put(dst, n++, offsetof<BlockParams>("clsBlk"));
  put(dst, n++, offsetof<BlockParams>("clsH"));
  put(dst, n++, offsetof<BlockParams>("clsByB"));
  put(dst, n++, offsetof<BlockParams>("progAll"));
  return n + runParamsLayout(dst + (<usize>n << 2));
}

/** GradPackParams' then GradBlockParams' (attention-grad.ts) then RunParams' field offsets. */
export function attentionGradParamsLayout(dst: usize): i32 {
  let n: i32 = 0;
  put(dst, n++, offsetof<GradPackParams>("kb"));
  put(dst, n++, offsetof<GradPackParams>("ks2"));
  put(dst, n++, offsetof<GradPackParams>("ks3"));
  put(dst, n++, offsetof<GradPackParams>("vb"));
  put(dst, n++, offsetof<GradPackParams>("vs2"));
  put(dst, n++, offsetof<GradPackParams>("vs3"));
  put(dst, n++, offsetof<GradPackParams>("pb"));
  put(dst, n++, offsetof<GradPackParams>("ps1"));
  put(dst, n++, offsetof<GradPackParams>("ns"));
  put(dst, n++, offsetof<GradPackParams>("nd"));
  put(dst, n++, offsetof<GradPackParams>("ndv"));
  put(dst, n++, offsetof<GradPackParams>("s0"));
  put(dst, n++, offsetof<GradPackParams>("s1"));
  put(dst, n++, offsetof<GradPackParams>("mode"));
  put(dst, n++, offsetof<GradPackParams>("dst"));
  put(dst, n++, offsetof<GradPackParams>("scratch"));
  put(dst, n++, offsetof<GradBlockParams>("qb"));
  put(dst, n++, offsetof<GradBlockParams>("qs2"));
  put(dst, n++, offsetof<GradBlockParams>("gb"));
  put(dst, n++, offsetof<GradBlockParams>("gs2"));
  put(dst, n++, offsetof<GradBlockParams>("ob"));
  put(dst, n++, offsetof<GradBlockParams>("os2"));
  put(dst, n++, offsetof<GradBlockParams>("lb"));
  put(dst, n++, offsetof<GradBlockParams>("ls2"));
  put(dst, n++, offsetof<GradBlockParams>("i0"));
  put(dst, n++, offsetof<GradBlockParams>("br"));
  put(dst, n++, offsetof<GradBlockParams>("ns"));
  put(dst, n++, offsetof<GradBlockParams>("nd"));
  put(dst, n++, offsetof<GradBlockParams>("ndv"));
  put(dst, n++, offsetof<GradBlockParams>("causal"));
  put(dst, n++, offsetof<GradBlockParams>("off"));
  put(dst, n++, offsetof<GradBlockParams>("win"));
  put(dst, n++, offsetof<GradBlockParams>("scale"));
  put(dst, n++, offsetof<GradBlockParams>("dropping"));
  put(dst, n++, offsetof<GradBlockParams>("mixedSeed"));
  put(dst, n++, offsetof<GradBlockParams>("threshold"));
  put(dst, n++, offsetof<GradBlockParams>("keptScale"));
  put(dst, n++, offsetof<GradBlockParams>("padded"));
  put(dst, n++, offsetof<GradBlockParams>("headRow"));
  put(dst, n++, offsetof<GradBlockParams>("anyBad"));
  put(dst, n++, offsetof<GradBlockParams>("fromBlock"));
  put(dst, n++, offsetof<GradBlockParams>("maxBlocks"));
  put(dst, n++, offsetof<GradBlockParams>("mode"));
  put(dst, n++, offsetof<GradBlockParams>("out"));
  put(dst, n++, offsetof<GradBlockParams>("scratch"));
  put(dst, n++, offsetof<GradBlockParams>("prog"));
  put(dst, n++, offsetof<GradBlockParams>("regs"));
  put(dst, n++, offsetof<GradBlockParams>("bi"));
  put(dst, n++, offsetof<GradBlockParams>("hi"));
  return n + runParamsLayout(dst + (<usize>n << 2));
}

/** AffineParams' field offsets. */
export function affineParamsLayout(dst: usize): i32 {
  let n: i32 = 0;
  put(dst, n++, offsetof<AffineParams>("eps"));
  put(dst, n++, offsetof<AffineParams>("w"));
  put(dst, n++, offsetof<AffineParams>("ws"));
  put(dst, n++, offsetof<AffineParams>("b"));
  put(dst, n++, offsetof<AffineParams>("bs"));
  return n;
}

/** PairParams' field offsets. */
export function pairParamsLayout(dst: usize): i32 {
  let n: i32 = 0;
  put(dst, n++, offsetof<PairParams>("a"));
  put(dst, n++, offsetof<PairParams>("ars"));
  put(dst, n++, offsetof<PairParams>("acs"));
  put(dst, n++, offsetof<PairParams>("b"));
  put(dst, n++, offsetof<PairParams>("brs"));
  put(dst, n++, offsetof<PairParams>("bcs"));
  put(dst, n++, offsetof<PairParams>("dst"));
  put(dst, n++, offsetof<PairParams>("rows"));
  put(dst, n++, offsetof<PairParams>("n"));
  return n;
}

/** LookupParams' field offsets. */
export function lookupParamsLayout(dst: usize): i32 {
  let n: i32 = 0;
  put(dst, n++, offsetof<LookupParams>("ids"));
  put(dst, n++, offsetof<LookupParams>("idesc"));
  put(dst, n++, offsetof<LookupParams>("nv"));
  put(dst, n++, offsetof<LookupParams>("ne"));
  return n;
}

/** TargetParams' field offsets. */
export function targetParamsLayout(dst: usize): i32 {
  let n: i32 = 0;
  put(dst, n++, offsetof<TargetParams>("div"));
  put(dst, n++, offsetof<TargetParams>("targets"));
  put(dst, n++, offsetof<TargetParams>("tdesc"));
  put(dst, n++, offsetof<TargetParams>("ignore"));
  put(dst, n++, offsetof<TargetParams>("hasIgnore"));
  put(dst, n++, offsetof<TargetParams>("grad"));
  put(dst, n++, offsetof<TargetParams>("gstride"));
  return n;
}

/** OptimParams' field offsets. */
export function optimParamsLayout(dst: usize): i32 {
  let n: i32 = 0;
  put(dst, n++, offsetof<OptimParams>("beta"));
  put(dst, n++, offsetof<OptimParams>("wd"));
  put(dst, n++, offsetof<OptimParams>("t"));
  put(dst, n++, offsetof<OptimParams>("lr"));
  put(dst, n++, offsetof<OptimParams>("beta1"));
  put(dst, n++, offsetof<OptimParams>("beta2"));
  put(dst, n++, offsetof<OptimParams>("eps"));
  put(dst, n++, offsetof<OptimParams>("mu"));
  put(dst, n++, offsetof<OptimParams>("keep"));
  put(dst, n++, offsetof<OptimParams>("extra"));
  put(dst, n++, offsetof<OptimParams>("flag"));
  put(dst, n++, offsetof<OptimParams>("hasParam"));
  return n;
}
