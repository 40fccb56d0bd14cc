// Every golden case (packages/testkit/golden), run node by node through the wasm kernels the way a lowered plan of the
// standard attention builder calls them, unfused (score → mask → softmax → dropout → weighted-sum) and fused
// (attention). The runtime path (compile → run, fused or tapped) is covered by `attngraph conformance --executor wasm`.
import { describe, expect, it } from "vitest";
import { compare, type Shape, type Tensor } from "@attngraph/tensor";
import { goldenDir, listCases, loadCase, type GoldenCase } from "@attngraph/testkit";
import type { WasmExecutor } from "./executor.js";
import type { WasmValue } from "./value.js";
import { wasmExecutor } from "./test-util.js";

const files = listCases(goldenDir);

function runCase(ex: WasmExecutor, c: GoldenCase, fused: boolean): Record<string, Tensor> {
  const held: WasmValue[] = [];
  const up = (t: Tensor | undefined) => {
    if (t === undefined) return undefined;
    const v = ex.upload(t);
    held.push(v);
    return v;
  };
  const call = (
    kind: string,
    node: string,
    inputs: (WasmValue | undefined)[],
    attrs: Record<string, unknown>,
    outShape: Shape,
  ) => {
    const v = ex.dispatch({ kind, node, attrs, inputs, outShape });
    held.push(v);
    return v;
  };
  const { numHeads: H, numKvHeads: Hkv, dOut, causal, window, cross } = c.config;
  const D = dOut / H;
  const xHost = c.inputs.x!;
  const x = up(xHost)!;
  const kvIn = cross ? up(c.inputs.kv)! : x;
  const [B, L] = xHost.shape as [number, number];
  const S = cross ? c.inputs.kv!.shape[1]! : L;
  const w = (name: string) => up(c.weights[name]);
  const pad = up(c.inputs.keyPaddingMask);
  const scale = c.config.scale ?? 1 / Math.sqrt(D);

  const queries = call("projection", "queries", [x, w("W_query"), w("b_query")], {}, [B, L, dOut]); // (B, L, E)
  const keys = call("projection", "keys", [kvIn, w("W_key"), w("b_key")], {}, [B, S, Hkv * D]);
  const values = call("projection", "values", [kvIn, w("W_value"), w("b_value")], {}, [B, S, Hkv * D]);
  const split = (t: WasmValue, name: string, heads: number, len: number) => {
    const r = call("reshape", `${name}.split`, [t], { shape: [B, len, heads, D] }, [B, len, heads, D]); // (B, len, heads, D)
    return call("transpose", `${name}.heads`, [r], { perm: [0, 2, 1, 3] }, [B, heads, len, D]); // (B, heads, len, D), a view
  };
  const q = split(queries, "queries", H, L);
  const k = split(keys, "keys", Hkv, S);
  const v = split(values, "values", Hkv, S);
  const maskAttrs = { causal, window, alignment: "top-left" };
  const got: Record<string, WasmValue> = { queries, keys, values };
  let heads: WasmValue;
  if (fused) {
    heads = call(
      "attention",
      "context.heads",
      [q, k, v, pad],
      { ...maskAttrs, scale, dropoutRate: 0.1, dropoutSeed: 1, training: false },
      [B, H, L, D],
    );
  } else {
    got.scores = call("score", "scores", [q, k], {}, [B, H, L, S]); // (B, H, L, S)
    const masked = call("mask", "masked", [got.scores, pad], maskAttrs, [B, H, L, S]);
    const probs = call("softmax", "probs", [masked], { scale }, [B, H, L, S]);
    got.weights = call("dropout", "weights", [probs], { rate: 0.1, seed: 1, training: false }, [B, H, L, S]);
    heads = call("weighted-sum", "context.heads", [got.weights, v], {}, [B, H, L, D]); // (B, H, L, D)
  }
  const merged = call("transpose", "context.merge", [heads], { perm: [0, 2, 1, 3] }, [B, L, H, D]); // (B, L, H, D)
  got.context = call("reshape", "context", [merged], { shape: [B, L, dOut] }, [B, L, dOut]); // (B, L, E), a copy
  got.output = c.weights.out_proj
    ? call("out-proj", "output", [got.context, w("out_proj"), w("out_bias")], {}, [B, L, c.weights.out_proj.shape[0]!])
    : got.context;
  const result = Object.fromEntries(Object.entries(got).map(([name, value]) => [name, ex.download(value)]));
  for (const value of held) ex.release(value);
  return result;
}

describe("golden cases through the wasm kernels", async () => {
  const ex = await wasmExecutor();

  it("finds the golden cases", () => {
    expect(files.length).toBeGreaterThan(10);
  });

  for (const fused of [false, true]) {
    it.each(files.map((f) => [f.slice(goldenDir.length + 1), f]))(
      `%s (${fused ? "fused attention" : "unfused chain"})`,
      (_name, file) => {
        const c = loadCase(file);
        const before = ex.inUseBytes;
        const got = runCase(ex, c, fused);
        const names = Object.keys(c.expected).filter((n) => n in got);
        expect(names.length).toBeGreaterThan(fused ? 2 : 5);
        for (const name of names) {
          const result = compare(got[name]!, c.expected[name]!, c.tolerance);
          expect({ name, ...result }).toMatchObject({ name, ok: true });
        }
        expect(ex.inUseBytes, "everything released").toBe(before);
      },
    );
  }
});
