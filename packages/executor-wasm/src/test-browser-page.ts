// The page the headless-Chromium test loads (bundled by browser.test.ts): a one-thread executor and a `threads: 2`
// one side by side, a projection and a fused attention on both (the threaded bits must be the one-thread bits), then
// one golden case through compile on the threaded one (testkit's checkGoldenSession). Results and the threading state
// go on `window`.
import { compile } from "@attngraph/runtime";
import { Tensor, type Shape } from "@attngraph/tensor";
import { checkGoldenSession, type PageResult } from "@attngraph/testkit";
import golden from "../../testkit/golden/mha-causal-outproj-b2-t6-d8-h2.json" with { type: "json" };
import { createWasmExecutor, type WasmExecutor } from "./index.js";

export type { PageResult };

export interface PageThreading {
  readonly crossOriginIsolated: boolean;
  readonly one: { readonly threading: WasmExecutor["threading"]; readonly describe: string };
  readonly two: { readonly threading: WasmExecutor["threading"]; readonly describe: string };
  /** `two.stats.threaded` before and after the kernel calls and the golden case. */
  readonly threaded: { readonly before: number; readonly after: number };
}

// test-util.ts's onWasm and random, copied: test-util makes a CPU executor on import (its reference), which this
// page does not need.
function onWasm(
  ex: WasmExecutor,
  kind: string,
  attrs: Record<string, unknown>,
  inputs: readonly (Tensor | undefined)[],
  outShape: Shape,
): Tensor {
  const values = inputs.map((t) => (t === undefined ? undefined : ex.upload(t)));
  const out = ex.dispatch({ kind, node: kind, attrs, inputs: values, outShape });
  const host = ex.download(out).contiguous();
  ex.release(out);
  for (const v of values) if (v) ex.release(v);
  return host;
}

function random(shape: Shape, seed: number): Tensor {
  let s = seed >>> 0 || 1;
  const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
  for (let i = 0; i < data.length; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    data[i] = (s / 2 ** 32) * 2 - 1;
  }
  return new Tensor(data, shape);
}

/** Ok when the float32 bits agree everywhere; else the first differing index and both values. */
function sameBits(name: string, got: Tensor, want: Tensor): PageResult {
  const a = got.toFloat32Array();
  const b = want.toFloat32Array();
  const x = new Uint32Array(Float32Array.from(a).buffer);
  const y = new Uint32Array(Float32Array.from(b).buffer);
  if (x.length !== y.length) return { name, ok: false, error: `${x.length} elements, want ${y.length}` };
  const i = x.findIndex((v, j) => v !== y[j]);
  return i < 0
    ? { name, ok: true }
    : { name, ok: false, error: `element ${i}: ${a[i]} (threads: 2) vs ${b[i]} (one thread)` };
}

function kernels(one: WasmExecutor, two: WasmExecutor): PageResult[] {
  const [rows, nIn, nOut] = [37, 48, 20];
  const x = random([rows, nIn], 1);
  const w = random([nOut, nIn], 2);
  const bias = random([nOut], 3);
  const results = [
    sameBits(
      `projection [${rows}, ${nIn}] · [${nOut}, ${nIn}]ᵀ + bias`,
      onWasm(two, "projection", {}, [x, w, bias], [rows, nOut]),
      onWasm(one, "projection", {}, [x, w, bias], [rows, nOut]),
    ),
  ];
  const [B, H, Hkv, L, S, D] = [2, 4, 2, 40, 40, 16];
  const q = random([B, H, L, D], 11);
  const k = random([B, Hkv, S, D], 12);
  const v = random([B, Hkv, S, D], 13);
  const attrs = { causal: true, alignment: "bottom-right", scale: 1 / Math.sqrt(D) }; // the rest declared defaults
  const out: Shape = [B, H, L, D];
  results.push(
    sameBits(
      `fused attention B${B} H${H} Hkv${Hkv} L${L} S${S} D${D}, causal`,
      onWasm(two, "attention", attrs, [q, k, v, undefined], out),
      onWasm(one, "attention", attrs, [q, k, v, undefined], out),
    ),
  );
  return results;
}

async function main(): Promise<void> {
  const w = globalThis as unknown as { __results?: PageResult[]; __threading?: PageThreading; __error?: string };
  try {
    const one = createWasmExecutor({ flavour: "auto" });
    // parallelWork 0: these small calls split too, so the workers run.
    const two = createWasmExecutor({ flavour: "auto", threads: 2, parallelWork: 0 });
    await Promise.all([one.init(), two.init()]);
    const before = two.stats.threaded;
    const results = [
      ...kernels(one, two),
      ...(await checkGoldenSession(golden, (graph, weights) => compile(graph, { executors: [two], weights }))),
    ];
    w.__threading = {
      crossOriginIsolated: (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === true,
      one: { threading: one.threading, describe: one.describe() },
      two: { threading: two.threading, describe: two.describe() },
      threaded: { before, after: two.stats.threaded },
    };
    one.dispose();
    two.dispose();
    w.__results = results;
  } catch (e) {
    w.__error = e instanceof Error ? `${e.message}\n${e.stack}` : String(e);
  }
}

void main();
