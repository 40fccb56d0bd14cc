// Fused attention with modifications, wasm, 1 thread (run pinned: `taskset -c 0 node scripts/bench-mods.mjs`; FLAVOUR=relaxed
// needs --experimental-wasm-relaxed-simd on Node 20): B1 H12 T1024 D64, built-in causal vs maskMod ge(q, kv) vs ALiBi
// and softcap score modifications; median of 9 interleaved rounds.
import { createWasmExecutor } from "../dist/index.js";
import { Tensor } from "@attngraph/tensor";
import { alibiScoreMod, checkExpr, compileExpr } from "@attngraph/graph";
const ex = createWasmExecutor({ flavour: process.env.FLAVOUR ?? "simd" });
await ex.init();
const [B, H, T, D] = [1, 12, 1024, 64];
const rnd = (n) => {
  let s = 7;
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    a[i] = (s / 2 ** 32) * 2 - 1;
  }
  return a;
};
const q = ex.upload(new Tensor(rnd(B * H * T * D), [B, H, T, D]));
const k = ex.upload(new Tensor(rnd(B * H * T * D), [B, H, T, D]));
const v = ex.upload(new Tensor(rnd(B * H * T * D), [B, H, T, D]));
const slopes = ex.upload(
  new Tensor(
    Float32Array.from({ length: H }, (_, h) => 2 ** -(h + 1)),
    [H],
  ),
);
const base = {
  causal: false,
  window: null,
  alignment: "top-left",
  scale: 0.125,
  dropoutRate: 0,
  dropoutSeed: 0,
  training: false,
  scoreMod: null,
  maskMod: null,
  inputs: [],
};
const ge = { op: "ge", args: ["q", "kv"] };
const alibi = alibiScoreMod();
const softcap = { op: "mul", args: [{ op: "tanh", args: [{ op: "div", args: ["score", 20] }] }, 20] };
const variants = {
  "built-in causal": [{ ...base, causal: true }, []],
  "maskMod ge(q,kv) (no positional skip)": [{ ...base, maskMod: ge }, []],
  "ALiBi scoreMod + built-in causal": [{ ...base, causal: true, scoreMod: alibi, inputs: ["slopes"] }, [slopes]],
  "softcap(tanh) scoreMod + built-in causal": [{ ...base, causal: true, scoreMod: softcap }, []],
  "no mask": [{ ...base }, []],
};
// Rounds over every variant in turn (a slow spell of the machine hits them all alike); the median per variant.
const times = Object.fromEntries(Object.keys(variants).map((n) => [n, []]));
for (let r = 0; r < 9; r++) {
  for (const [name, [attrs, g]] of Object.entries(variants)) {
    const t0 = performance.now();
    const out = ex.dispatch({
      kind: "attention",
      node: "attn",
      attrs,
      inputs: [q, k, v, undefined, ...g],
      outShape: [B, H, T, D],
    });
    times[name].push(performance.now() - t0);
    ex.release(out);
  }
}
const median = (ts) => [...ts].sort((a, b) => a - b)[ts.length >> 1];
for (const [name, ts] of Object.entries(times))
  console.log(`${name}: ${median(ts).toFixed(1)} ms (min ${Math.min(...ts).toFixed(1)})`);
// The alternative's floor: the same ALiBi expression as a JavaScript function (compileExpr, the cpu/JS path) called
// once per element that a causal run shows (B·H·T·(T+1)/2), nothing else: a "JS callback per tile" pays at least this.
const { expr } = checkExpr(alibi, { subject: "x", role: "score", inputs: new Map([["slopes", 1]]) });
const f = compileExpr(
  expr,
  new Map([
    [
      "slopes",
      { data: Float32Array.from({ length: H }, (_, h) => 2 ** -(h + 1)), shape: [H], strides: [1], offset: 0 },
    ],
  ]),
  "x",
);
const buf = new Float32Array(T);
const jsTs = [];
for (let r = 0; r < 9; r++) {
  const t0 = performance.now();
  for (let h = 0; h < H; h++) for (let i = 0; i < T; i++) for (let j = 0; j <= i; j++) buf[j] = f(buf[j], 0, h, i, j);
  jsTs.push(performance.now() - t0);
}
jsTs.sort((a, b) => a - b);
console.log(
  `JS expression alone over the causal elements (compileExpr, ALiBi): ${jsTs[4].toFixed(1)} ms (min ${jsTs[0].toFixed(1)})`,
);
