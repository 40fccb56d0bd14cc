// --problem flex: every variant builds in both parts, and on a tiny shape every implementation's output matches a
// float64 reference written here loop by loop from the variants' definitions (not from their expressions, so a wrong
// expression shows up too); the rows carry what the results file promises; a row without memory says so.
import { AttnGraphError } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { parseCli, UsageError } from "../cli.js";
import { maxAbsDiff } from "../test-reference.js";
import { attngraphFlexImpl, FlexMemoryError } from "./attngraph.js";
import { flexGraph } from "./graphs.js";
import { ortFlexImpl } from "./ort.js";
import { flexGathered, makeFlexProblem, type FlexProblem } from "./problem.js";
import { flexCases, isOutOfMemory, runFlexBench } from "./run.js";
import type { FlexCase, FlexImpl } from "./types.js";
import { alibiSlopes, FLEX_VARIANTS, type FlexVariant } from "./variants.js";

// Window 3 and cap 0.5, so both bite at T = 9 (the bench's 128 and 50 would leave the variants equal to causal here).
const SHAPE = { b: 2, t: 9, d: 8, h: 2 };
const p = makeFlexProblem(SHAPE, { window: 3, softcap: 0.5 }, 7);

/** Whether query q sees key kv in batch row n, by the variant's definition. */
function sees(p: FlexProblem, variant: FlexVariant, n: number, q: number, kv: number): boolean {
  const { t } = p.shape;
  if (kv > q) return false; // every variant is causal
  if (variant === "window") return q - kv < p.constants.window;
  if (variant === "user-mask") return flexGathered(p, { gathered: ["mask"] }).mask!.data[q * t + kv] !== 0;
  if (variant === "document") {
    const doc = flexGathered(p, { gathered: ["doc"] }).doc!.data;
    return doc[n * t + q] === doc[n * t + kv];
  }
  return true;
}

/** The core in float64: q, k, v [b, H, T, D] → [b, H, T, D]. */
function referenceCore(
  p: FlexProblem,
  variant: FlexVariant,
  q: ArrayLike<number>,
  k: ArrayLike<number>,
  v: ArrayLike<number>,
): Float64Array {
  const { b, t, d, h } = p.shape;
  const D = d / h;
  const slopes = alibiSlopes(h);
  const out = new Float64Array(b * h * t * D);
  for (let n = 0; n < b; n++)
    for (let hh = 0; hh < h; hh++)
      for (let i = 0; i < t; i++) {
        const base = (n * h + hh) * t;
        const s = new Float64Array(t).fill(-Infinity);
        for (let j = 0; j < t; j++) {
          if (!sees(p, variant, n, i, j)) continue;
          let dot = 0;
          for (let e = 0; e < D; e++) dot += q[(base + i) * D + e]! * k[(base + j) * D + e]!;
          let score = dot * p.scale;
          if (variant === "softcap") score = Math.tanh(score / p.constants.softcap) * p.constants.softcap;
          if (variant === "alibi") score += slopes[hh]! * (j - i);
          s[j] = score;
        }
        const max = Math.max(...s);
        const w = s.map((x) => Math.exp(x - max));
        const sum = w.reduce((a, x) => a + x, 0);
        for (let j = 0; j < t; j++)
          for (let e = 0; e < D; e++) out[(base + i) * D + e]! += (w[j]! / sum) * v[(base + j) * D + e]!;
      }
  return out;
}

/** The layer in float64: x → Q, K, V (x·Wᵀ) → heads → the core → merged → out_proj + bias. */
function referenceLayer(p: FlexProblem, variant: FlexVariant): Float64Array {
  const { b, t, d, h } = p.shape;
  const D = d / h;
  const { x, wq, wk, wv, wo, bo } = p.layer;
  const linear = (src: ArrayLike<number>, w: Float32Array) => {
    const y = new Float64Array(b * t * d);
    for (let r = 0; r < b * t; r++)
      for (let o = 0; o < d; o++) for (let i = 0; i < d; i++) y[r * d + o]! += src[r * d + i]! * w[o * d + i]!;
    return y;
  };
  // [b, T, H, D] ↔ [b, H, T, D]
  const toHeads = (m: Float64Array, back = false) => {
    const y = new Float64Array(m.length);
    for (let n = 0; n < b; n++)
      for (let i = 0; i < t; i++)
        for (let hh = 0; hh < h; hh++)
          for (let e = 0; e < D; e++) {
            const a = ((n * t + i) * h + hh) * D + e;
            const c = ((n * h + hh) * t + i) * D + e;
            if (back) y[a] = m[c]!;
            else y[c] = m[a]!;
          }
    return y;
  };
  const ctx = toHeads(
    referenceCore(p, variant, toHeads(linear(x, wq)), toHeads(linear(x, wk)), toHeads(linear(x, wv))),
    true,
  );
  const y = linear(ctx, wo);
  for (let r = 0; r < b * t; r++) for (let o = 0; o < d; o++) y[r * d + o]! += bo[o]!;
  return y;
}

const reference = (c: FlexCase) =>
  c.part === "core" ? referenceCore(p, c.variant, p.q, p.k, p.v) : referenceLayer(p, c.variant);

describe("flex problem", () => {
  it("has every variant in both parts, causal-builtin only as a core row, and builds each graph", () => {
    const cases = flexCases();
    expect(cases.filter((c) => c.part === "core").map((c) => c.variant)).toEqual(FLEX_VARIANTS);
    expect(cases.filter((c) => c.part === "layer").map((c) => c.variant)).toEqual(
      FLEX_VARIANTS.filter((v) => v !== "causal-builtin"),
    );
    for (const c of cases) expect(flexGraph(p, c.variant, c.part).outputs).toHaveLength(1);
  });

  it("the reference's variants differ from each other here (so each comparison below checks its own variant)", () => {
    const outs = FLEX_VARIANTS.filter((v) => v !== "causal-builtin").map((variant) =>
      referenceCore(p, variant, p.q, p.k, p.v),
    );
    for (let i = 0; i < outs.length; i++)
      for (let j = i + 1; j < outs.length; j++) expect(maxAbsDiff(outs[i]!, outs[j]!)).toBeGreaterThan(1e-3);
  });

  const impls: FlexImpl[] = [attngraphFlexImpl("cpu"), attngraphFlexImpl("wasm"), ortFlexImpl("web")];
  describe.each(impls.map((impl) => [impl.name, impl] as const))("%s", (_, impl) => {
    it.each(flexCases().map((c) => [`${c.part} ${c.variant}`, c] as const))(
      "%s matches the float64 reference",
      async (_name, c) => {
        const runner = await impl.setup(p, c, { threads: 1 });
        try {
          const out = await runner.run();
          const ref = reference(c);
          expect(out).toHaveLength(ref.length);
          expect(maxAbsDiff(out, ref)).toBeLessThan(1e-5);
          if (impl.family === "attngraph") expect(runner.plannedPeakBytes).toBeGreaterThan(0);
        } finally {
          await runner.dispose();
        }
      },
    );
  });

  it("writes rows with variant, part, medianMs and plannedPeakBytes; a row without memory is unavailable and says so", async () => {
    const noMemory: FlexImpl = {
      name: "tiny-heap",
      family: "attngraph",
      setup: () => Promise.reject(new FlexMemoryError("out of memory: planned peak 12.0 GiB", 12 * 2 ** 30)),
    };
    const options = {
      ...parseCli([
        "--problem",
        "flex",
        "--shape",
        "1,6,8,2",
        "--variant",
        "document,softcap",
        "--part",
        "core",
        "--runs",
        "1",
        "--warmup",
        "0",
      ]),
    };
    const results = JSON.parse(
      JSON.stringify(
        await runFlexBench(
          options,
          [attngraphFlexImpl("wasm"), noMemory],
          { variants: options.variants!, parts: options.parts! },
          () => undefined,
        ),
      ),
    );
    expect(results.meta.problem).toBe("flex");
    expect(results.rows.map((r: { variant: string; impl: string }) => `${r.variant} ${r.impl}`)).toEqual([
      "softcap wasm",
      "softcap tiny-heap",
      "document wasm",
      "document tiny-heap",
    ]);
    for (const r of results.rows) {
      expect(r).toMatchObject({ problem: "flex", part: "core", t: 6 });
      expect(r).toHaveProperty("medianMs");
      expect(r).toHaveProperty("plannedPeakBytes");
    }
    const ran = results.rows.filter((r: { impl: string }) => r.impl === "wasm");
    for (const r of ran) expect([r.status, typeof r.medianMs, r.plannedPeakBytes > 0]).toEqual(["ok", "number", true]);
    const oom = results.rows.find((r: { impl: string }) => r.impl === "tiny-heap");
    expect([oom.status, oom.medianMs, oom.reason, oom.plannedPeakBytes]).toEqual([
      "unavailable",
      null,
      "out of memory: planned peak 12.0 GiB",
      12 * 2 ** 30,
    ]);
  });

  it("takes the wasm heap's refusal (memory-limit), also inside a run error, for a lack of memory", () => {
    const refusal = new AttnGraphError("memory-limit", "allocating 12 GiB would grow the wasm memory past its limit");
    expect(isOutOfMemory(refusal)).toBe(true);
    expect(isOutOfMemory(new Error("step masked failed", { cause: refusal }))).toBe(true);
    expect(isOutOfMemory(new Error("unsupported op"))).toBe(false);
  });

  it("parses --t, --variant and --part (flex only)", () => {
    const o = parseCli(["--problem", "flex", "--t", "4096,16384", "--part", "core", "--variant", "document"]);
    expect([o.shapes, o.parts, o.variants]).toEqual([
      [
        { b: 1, t: 4096, d: 768, h: 12 },
        { b: 1, t: 16384, d: 768, h: 12 },
      ],
      ["core"],
      ["document"],
    ]);
    expect(parseCli(["--problem", "flex"]).shapes).toEqual([{ b: 1, t: 1024, d: 768, h: 12 }]);
    expect(() => parseCli(["--t", "4096"])).toThrow(UsageError);
    expect(() => parseCli(["--problem", "flex", "--variant", "prefix"])).toThrow(/--variant "prefix"/);
  });
});
