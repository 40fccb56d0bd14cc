// Taps decide lowering: an untapped run may fuse score → mask → softmax → weighted-sum; tapping `weights` keeps the
// chain, and the tapped tensors are exactly those of a session that never fuses.
import { attentionWeights, buildAttention } from "@attngraph/attention";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { compare, Tensor } from "@attngraph/tensor";
import { firstValueFrom, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { compile } from "./compile.js";
import { rawAttentionWeights } from "./test-random.js";

const config = { dIn: 16, dOut: 16, numHeads: 4, numKvHeads: 2, causal: true, window: 5 };
const seeded = (shape: number[], seed: number) =>
  Tensor.from(
    Array.from({ length: shape.reduce((a, b) => a * b) }, (_, i) => Math.sin(seed * 31 + i * 0.7)),
    shape,
  );
const weights = attentionWeights(config, rawAttentionWeights(config, seeded));
const x = seeded([2, 9, 16], 6);
const session = (fusion = true) =>
  compile(buildAttention(config), { executors: [createCpuExecutor()], weights, fusion });

describe("taps decide lowering", () => {
  it("fuses the middle of an untapped run and keeps it for a run that taps weights", async () => {
    const s = await session();
    expect(s.plan.steps.find((st) => st.node === "context.heads")!.kind).toBe("attention");
    expect(s.plan.steps.some((st) => st.node === "weights")).toBe(false);
    const kinds: string[] = [];
    s.events$.subscribe((e) => e.type === "node-end" && kinds.push(e.kind));
    await s.run({ x });
    expect(kinds).toContain("attention");
    kinds.length = 0;
    const w = firstValueFrom(s.tap("weights"));
    await s.run({ x });
    expect(kinds).not.toContain("attention");
    expect(kinds).toEqual(expect.arrayContaining(["score", "mask", "softmax", "weighted-sum"]));
    expect((await w).tensor.shape).toEqual([2, 4, 9, 9]);
  });

  it("gives the same outputs fused and unfused, and tapped tensors equal to a never-fusing session exactly", async () => {
    const fused = await session();
    const unfused = await session(false);
    const a = await fused.run({ x });
    const b = await unfused.run({ x });
    expect(compare(a.output!, b.output!, { abs: 1e-6, rel: 1e-5 }).ok).toBe(true);

    const names = ["scores", "masked", "weights", "context.heads", "context", "output"];
    const tappedFused = firstValueFrom(fused.tap(names).pipe(toArray()));
    const tappedUnfused = firstValueFrom(unfused.tap(names).pipe(toArray()));
    await fused.run({ x });
    await unfused.run({ x });
    await fused.dispose();
    await unfused.dispose();
    const [tf, tu] = [await tappedFused, await tappedUnfused];
    expect(tf.map((e) => e.node)).toEqual(names);
    tf.forEach((e, i) => expect(Array.from(e.tensor.data)).toEqual(Array.from(tu[i]!.tensor.data)));
  });

  it("reuses one planned arena across runs: memory does not grow with the number of runs", async () => {
    const s = await session(false);
    const plan = s.memoryPlan({ x: x.shape });
    expect(plan.peakBytes).toBeGreaterThan(0);
    expect(plan.peakBytes).toBeLessThan(plan.unplannedBytes);
    const first = (await s.run({ x })).output!.toArray();
    for (let i = 0; i < 20; i++) expect((await s.run({ x })).output!.toArray()).toEqual(first);
    expect(s.explain({ inputs: { x: x.shape } })).toMatch(
      /memory: .* planned peak \(arena\) vs .* for all intermediates unplanned/,
    );
  });

  it("keeps concurrent runs apart even though they use pooled arenas", async () => {
    const s = await session();
    const xs = [1, 2, 3].map((i) => seeded([2, 9, 16], 10 + i));
    const alone = [];
    for (const xi of xs) alone.push((await s.run({ x: xi })).output!.toArray());
    const together = await Promise.all(xs.map((xi) => s.run({ x: xi }, { signal: new AbortController().signal })));
    expect(together.map((r) => r.output!.toArray())).toEqual(alone);
  });
});
