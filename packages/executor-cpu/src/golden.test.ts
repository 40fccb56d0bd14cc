// Every golden case (packages/testkit/golden), run node by node through the CPU executor's kernels, the way a lowered
// plan of the standard attention builder would call them. The graph, scheduler and runtime are not involved: this
// checks the kernels against PyTorch, not the plumbing.
import { describe, expect, it } from "vitest";
import { compare, type Shape, type Tensor } from "@attngraph/tensor";
import { goldenDir, listCases, loadCase, type GoldenCase } from "@attngraph/testkit";
import { createCpuExecutor } from "./register-kernels.js";

const files = listCases(goldenDir);

/** Runs the standard attention block as kernel calls and returns each named intermediate. */
function runCase(c: GoldenCase): Record<string, Tensor> {
  const ex = createCpuExecutor();
  const call = (
    kind: string,
    node: string,
    inputs: (Tensor | undefined)[],
    attrs: Record<string, unknown>,
    outShape: Shape,
  ) => ex.dispatch({ kind, node, attrs, inputs, outShape });
  const { numHeads: H, numKvHeads: Hkv, dOut, causal, window, cross } = c.config;
  const D = dOut / H;
  const x = c.inputs.x!;
  const kvIn = cross ? c.inputs.kv! : x;
  const [B, L] = x.shape as [number, number];
  const S = kvIn.shape[1]!;
  const w = (name: string) => c.weights[name];

  const queries = call("projection", "queries", [x, w("W_query"), w("b_query")], {}, [B, L, dOut]); // (B, L, E)
  const keys = call("projection", "keys", [kvIn, w("W_key"), w("b_key")], {}, [B, S, Hkv * D]); // (B, S, Hkv·D)
  const values = call("projection", "values", [kvIn, w("W_value"), w("b_value")], {}, [B, S, Hkv * D]);
  const split = (t: Tensor, name: string, heads: number, len: number) => {
    const r = call("reshape", `${name}.split`, [t], { shape: [B, len, heads, D] }, [B, len, heads, D]); // (B, len, heads, D)
    return call("transpose", `${name}.heads`, [r], { perm: [0, 2, 1, 3] }, [B, heads, len, D]); // (B, heads, len, D), a view
  };
  const q = split(queries, "queries", H, L);
  const k = split(keys, "keys", Hkv, S);
  const v = split(values, "values", Hkv, S);
  const scores = call("score", "scores", [q, k], {}, [B, H, L, S]); // (B, H, L, S)
  const masked = call("mask", "masked", [scores, c.inputs.keyPaddingMask], { causal, window, alignment: "top-left" }, [
    B,
    H,
    L,
    S,
  ]);
  const probs = call("softmax", "probs", [masked], { scale: c.config.scale ?? 1 / Math.sqrt(D) }, [B, H, L, S]);
  const weights = call("dropout", "weights", [probs], { rate: 0.1, seed: 1, training: false }, [B, H, L, S]);
  const heads = call("weighted-sum", "context.heads", [weights, v], {}, [B, H, L, D]); // (B, H, L, D)
  const merged = call("transpose", "context.merge", [heads], { perm: [0, 2, 1, 3] }, [B, L, H, D]); // (B, L, H, D)
  const context = call("reshape", "context", [merged], { shape: [B, L, dOut] }, [B, L, dOut]); // (B, L, E), a copy
  const output = c.weights.out_proj
    ? call("out-proj", "output", [context, w("out_proj"), w("out_bias")], {}, [B, L, c.weights.out_proj.shape[0]!])
    : context;
  return { queries, keys, values, scores, weights, context, output };
}

describe("golden cases through the CPU kernels", () => {
  it("finds the golden cases", () => {
    expect(files.length).toBeGreaterThan(10);
  });

  it.each(files.map((f) => [f.slice(goldenDir.length + 1), f]))("%s", (_name, file) => {
    const c = loadCase(file);
    const got = runCase(c);
    const names = Object.keys(c.expected);
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) {
      const result = compare(got[name]!, c.expected[name]!, c.tolerance);
      expect({ name, ...result }).toMatchObject({ name, ok: true });
    }
  });
});
