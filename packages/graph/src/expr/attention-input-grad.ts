// The gradient of a gathered input of the fused attention (attention-grad with wrt "gN": a learnable bias table, per-head
// temperatures), on the host in JavaScript, for every executor: one loop over every (query, key) pair a row sees,
// recomputing its weight from the saved lse as the fused backward does, and scattering dS' · ∂scoreMod/∂read to the
// index of every read of the input. No [L, S] value is kept. It is plain float64 arithmetic over strided views (cpu
// arrays, a wasm module's memory, a WebGPU readback); the gradient of a gathered input is small and taken once per step,
// so it is written for clarity, not for speed.
import { AttnGraphError } from "@attngraph/tensor";
import { maskOffset, windowOf } from "../kernel-checks.js";
import type { AttentionGradAttrs } from "../ops/attention-grad.js";
import { dropoutThreshold, fmix32, mixedBits } from "../ops/dropout-hash.js";
import { compileMods } from "./attention-mods-host.js";
import { checkExprCached } from "./check.js";
import type { GatheredTensor } from "./compile.js";
import { addReadGrads, readGradSites, type F32View } from "./host-kernels.js";

export interface AttentionGradViews {
  readonly q: F32View;
  readonly k: F32View;
  readonly v: F32View;
  readonly out: F32View;
  readonly grad: F32View;
  readonly lse: F32View;
  readonly pad: F32View | undefined;
}

/** at(view, i0, i1, …): the element at that index of a strided view. */
function at(t: F32View, ...index: number[]): number {
  let o = t.offset;
  for (let a = 0; a < index.length; a++) o += index[a]! * t.strides[a]!;
  return t.data[o]!;
}

/**
 * attention-grad wrt gathered slot `attrs.wrt` ("gN"): zeros of that input's shape plus Σ dS'_ij · ∂scoreMod/∂read over
 * every pair a query sees and every read of the input (attention-grad.ts has the math). Returns it row-major.
 */
export function attentionInputGrad(
  x: AttentionGradViews,
  attrs: AttentionGradAttrs,
  gathered: ReadonlyMap<string, GatheredTensor>,
  node: string,
): Float32Array {
  const slot = Number(attrs.wrt.slice(1));
  const names = attrs.inputs ?? [];
  const name = names[slot];
  const target = name === undefined ? undefined : gathered.get(name);
  if (name === undefined || target === undefined) {
    throw new AttnGraphError(
      "attribute",
      `${node}.wrt: no gathered input in slot ${attrs.wrt}, expected one of g0 … g${names.length - 1}`,
      { subject: `${node}.wrt` },
    );
  }
  const shape = target.shape;
  const size = shape.reduce((p, n) => p * n, 1);
  const sums = new Float64Array(size);
  const mods = compileMods(attrs, gathered, node, false);
  const scoreMod = attrs.scoreMod ?? null;
  if (mods === undefined || scoreMod === null || size === 0) return new Float32Array(size);
  const ranks = new Map([...gathered].map(([n, t]) => [n, t.shape.length]));
  const checked = checkExprCached(scoreMod, { subject: `${node}.scoreMod`, role: "score", inputs: ranks });
  const reads = readGradSites(checked, name, gathered, `${node}.scoreMod`, shape);
  if (reads.sites.length === 0) return new Float32Array(size);

  const [nb, nh, nl, nd] = x.q.shape as [number, number, number, number];
  const [, nhkv, ns] = x.k.shape as [number, number, number, number];
  const ndv = x.v.shape[3]!;
  const group = nh / nhkv;
  const off = maskOffset(attrs.alignment, nl, ns);
  const win = windowOf(attrs);
  const dropping = attrs.training && attrs.dropoutRate > 0;
  const seed = fmix32(attrs.dropoutSeed);
  const threshold = dropoutThreshold(attrs.dropoutRate);
  const keptScale = dropping ? Math.fround(1 / (1 - attrs.dropoutRate)) : 1;
  const scale = attrs.scale;
  for (let b = 0; b < nb; b++) {
    for (let h = 0; h < nh; h++) {
      const g = Math.floor(h / group);
      for (let i = 0; i < nl; i++) {
        const lse = at(x.lse, b, h, i);
        if (lse === -Infinity) continue; // a row that sees no key passes no gradient
        let delta = 0;
        for (let d = 0; d < ndv; d++) delta += at(x.grad, b, h, i, d) * at(x.out, b, h, i, d);
        for (let j = 0; j < ns; j++) {
          if (attrs.causal && j > i + off) break;
          if (win > 0 && j <= i + off - win) continue;
          if (x.pad !== undefined && at(x.pad, b, j) === 1) continue;
          if (mods.keep !== undefined && !mods.keep(0, b, h, i, j)) continue;
          let raw = 0;
          for (let d = 0; d < nd; d++) raw += at(x.q, b, h, i, d) * at(x.k, b, g, j, d);
          const s = Math.fround(scale * raw);
          const s2 = mods.score!(s, b, h, i, j) as number;
          if (s2 === -Infinity) continue;
          const p = Math.exp(s2 - lse);
          const m = dropping ? (mixedBits(seed, ((b * nh + h) * nl + i) * ns + j) >= threshold ? keptScale : 0) : 1;
          let dp = 0;
          for (let d = 0; d < ndv; d++) dp += at(x.grad, b, h, i, d) * at(x.v, b, g, j, d);
          const ds = p * (m * dp - delta);
          if (ds === 0) continue;
          addReadGrads(reads, sums, ds, s, b, h, i, j);
        }
      }
    }
  }
  return Float32Array.from(sums);
}
