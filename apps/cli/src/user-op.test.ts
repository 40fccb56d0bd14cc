// The README's user-op example (score soft-capping, tanh(s/c)·c, declared by the user, with a kernel on the cpu executor,
// inserted between score and mask) against a float64 computation from the testkit's reference pieces.
// Legend: B batch, H heads, L query length, S key length, D head dim, E = H·D.
import { attentionWeights, multiHeadAttention } from "@attngraph/attention";
import { createCpuExecutor, type CpuKernel } from "@attngraph/executor-cpu";
import { createOpRegistry, defineOp, insertAfter } from "@attngraph/graph";
import { compile } from "@attngraph/runtime";
import { compare, Tensor } from "@attngraph/tensor";
import { linear64, mask64, mergeHeads64, score64, softmax64, splitHeads64, weightedSum64 } from "@attngraph/testkit";
import { describe, expect, it } from "vitest";

const B = 2,
  L = 5,
  E = 8,
  H = 2,
  D = 4,
  CAP = 0.7;
const config = { dIn: E, dOut: E, numHeads: H, causal: true };
const seeded = (shape: number[], seed: number) =>
  Tensor.from(
    Array.from({ length: shape.reduce((a, b) => a * b) }, (_, i) => Math.sin(seed * 13.1 + i * 0.9)),
    shape,
  );
const raw = {
  W_query: seeded([E, E], 1),
  W_key: seeded([E, E], 2),
  W_value: seeded([E, E], 3),
  out_proj: seeded([E, E], 4),
  out_bias: seeded([E], 5),
};
const x = seeded([B, L, E], 6);

const softcap = defineOp<{ cap: number }>({
  kind: "softcap",
  doc: "tanh(s / cap) · cap",
  inputs: [{ name: "x", doc: "[B, H, L, S]" }],
  attrs: { cap: { type: "number", min: 0 } },
  inferShape: ([s]) => s!,
});
const softcapKernel: CpuKernel = ({ inputs, attrs }) => {
  const s = inputs[0]!.contiguous();
  const cap = attrs.cap as number;
  return new Tensor(
    s.data.map((v) => Math.tanh(v / cap) * cap),
    s.shape,
  );
};

/** The same attention in float64: projections, heads, Q·Kᵀ, soft-cap, causal mask, softmax, weighted sum, out-proj. */
function reference(): Float64Array {
  const f64 = (t: Tensor) => Float64Array.from(t.toArray());
  const heads = (w: Tensor) => splitHeads64(linear64(f64(x), E, f64(w), E), B, L, H, D);
  const dims = { B, H, Hkv: H, L, S: L, D };
  const scores = score64(heads(raw.W_query), heads(raw.W_key), dims).map((s) => Math.tanh(s / CAP) * CAP);
  const weights = softmax64(
    mask64(scores, B, H, L, L, { causal: true, window: null, alignment: "top-left" }),
    L,
    1 / Math.sqrt(D),
  );
  const context = mergeHeads64(weightedSum64(weights, heads(raw.W_value), dims), B, H, L, D);
  return linear64(context, E, f64(raw.out_proj), E, f64(raw.out_bias));
}

describe("user-defined op (README example)", () => {
  it("soft-capped attention matches the float64 reference, fused or not", async () => {
    const cpu = createCpuExecutor();
    cpu.registerKernel("softcap", softcapKernel);
    const base = multiHeadAttention(config, { registry: createOpRegistry([softcap]) });
    const capped = insertAfter(base, "scores", (b, s) => b.add("softcap", "scores.capped", { x: s }, { cap: CAP }));
    const session = await compile(capped, { executors: [cpu], weights: attentionWeights(config, raw) });
    const { output } = await session.run({ x });
    const r = compare(output!, Array.from(reference()), { abs: 1e-5, rel: 1e-4 });
    expect(r.ok, JSON.stringify(r.worst)).toBe(true);
    // Without the cap the numbers differ: the test would notice a kernel that is skipped.
    const plain = await (
      await compile(base, { executors: [createCpuExecutor()], weights: attentionWeights(config, raw) })
    ).run({ x });
    expect(compare(plain.output!, Array.from(reference()), { abs: 1e-5, rel: 1e-4 }).ok).toBe(false);
  });
});
