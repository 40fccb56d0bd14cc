// Hostile inputs: non-finite numbers, empty sequences, shapes that would need terabytes, bad padding flags. Each gives a
// defined result or a typed error (an AttnGraphError naming what is wrong), never a crash or a hang. Every probe runs
// on every executor (webgpu on SwiftShader in CI); the one that cannot apply to one is listed in NO_ARENA, by name.
import { attentionWeights, buildAttention, normalizeConfig } from "@attngraph/attention";
import { MemoryLimitError, RunError, compile, type SessionEvent } from "@attngraph/runtime";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { referenceAttention } from "@attngraph/testkit";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { attentionCases, describeCase, materialize, type AttentionCase } from "./cases.js";
import { dense, mismatch, runCase, toleranceFor, NAMES } from "./check.js";
import { executors, hangDeadline } from "./executors.js";
import { fcSettings } from "./settings.js";

/** Rejects if `p` has not settled within `ms`: a hang becomes a failure naming what hung, not a test timeout. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: still running after ${ms} ms`)), ms)),
  );
  return Promise.race([p, deadline]).finally(() => clearTimeout(timer));
}

const NON_FINITE = [NaN, Infinity, -Infinity] as const;

/** A causal self-attention case of width 4 (no padding, magnitude 1, seed 3): `numHeads` heads over `T` tokens. */
function causalCase(numHeads: number, T: number): AttentionCase {
  const config = normalizeConfig({ dIn: 4, dOut: 4, numHeads, causal: true });
  return { config, fusedQkv: false, B: 1, T, S: T, padding: false, magnitude: 1, seed: 3 };
}

/**
 * Executors the arena-limit probe cannot apply to, by name, with the reason. Every other probe runs on every executor.
 * (maxArenaBytes still bounds each single value on them: the "shapes too large" probes run there too.)
 */
const NO_ARENA: Readonly<Record<string, string>> = {
  webgpu: "webgpu plans no arena (no createArena): each value is a buffer from its pool",
};

/**
 * The tensors of a case a NaN or ±∞ can go into: its inputs and weights as materialize() draws them, so only ones the
 * config has (kv only for cross-attention, biases only with qkvBias/outBias, out_proj only with outProj). The key
 * padding mask is left out: a flag other than 0 or 1 is an error, probed below.
 */
function poisonTargets(c: AttentionCase): string[] {
  const m = materialize(c);
  return [...Object.keys(m.inputs), ...Object.keys(m.raw)].filter((name) => name !== "keyPaddingMask");
}

/** Every tensor poisonTargets can name, for the coverage check. */
const ALL_TARGETS = [
  "x",
  "kv",
  "W_query",
  "W_key",
  "W_value",
  "b_query",
  "b_key",
  "b_value",
  "out_proj",
  "out_bias",
] as const;

/** A case plus one element set to NaN or ±∞, in one of the inputs or weights this case has: no case is a no-op. */
const poisoned = attentionCases(40_000).chain((c) =>
  fc.record({
    c: fc.constant(c),
    value: fc.constantFrom(...NON_FINITE),
    target: fc.constantFrom(...poisonTargets(c)),
    at: fc.nat(),
  }),
);

describe.each(executors.map((e) => [e.name, e] as const))("%s: NaN and ±Infinity", (name, entry) => {
  it("one poisoned input or weight per case: propagate exactly where the float64 reference has them; finite elements stay within tolerance; never throws or hangs", async () => {
    const ex = await entry.create();
    const hits = new Map<string, number>(); // poisoned tensor → cases
    const settings = fcSettings(150);
    await fc.assert(
      fc.asyncProperty(poisoned, async ({ c, value, target, at }) => {
        hits.set(target, (hits.get(target) ?? 0) + 1);
        const m = materialize(c);
        const t = m.raw[target] ?? m.inputs[target];
        if (!t || t.size === 0)
          throw new Error(`poisoned ${target}, which this case does not have: ${describeCase(c)}`);
        t.data[at % t.size] = value;
        // Rebuild the graph's weights from the poisoned raw ones (fused QKV stacks copies).
        const weights = attentionWeights(c.config, m.raw, { fusedQkv: c.fusedQkv });
        const mm = { ...m, weights };
        const ref = referenceAttention(c.config, m.raw, m.inputs);
        const what = `${target}[${at % t.size}] = ${value}`;
        const untapped = await within(runCase(mm, ex, false), hangDeadline(entry), what);
        const tapped = await within(runCase(mm, ex, true), hangDeadline(entry), what);
        const problems: string[] = [];
        const check = (label: string, got: Tensor, n: (typeof NAMES)[number]) => {
          const p = mismatch(label, dense(got), ref[n], toleranceFor(ref[n]), true);
          if (p) problems.push(p);
        };
        check("output (untapped, fused)", untapped.output, "output");
        check("output (tapped)", tapped.output, "output");
        for (const n of NAMES) if (tapped.taps.has(n)) check(`tap ${n}`, tapped.taps.get(n)!, n);
        if (problems.length) throw new Error(`${name}: ${what}\n${problems.join("\n")}\n  case: ${describeCase(c)}`);
      }),
      settings,
    );
    // Every kind of tensor was poisoned somewhere (with the default run count; ATTNGRAPH_FC_RUNS may ask for fewer).
    if (settings.numRuns >= 150) expect([...hits.keys()].sort()).toEqual([...ALL_TARGETS].sort());
  }, 180_000); // 150 cases × 2 runs: about 15 s on SwiftShader, more on a busy machine

  it("a NaN in x: weights rows that see it are all NaN, the others still sum to 1 (causal: earlier queries unaffected)", async () => {
    const m = materialize(causalCase(2, 5));
    m.inputs.x!.data[2 * 4 + 1] = NaN; // token 2
    const out = await runCase(m, await entry.create(), true);
    const w = out.taps.get("weights")!; // [B, H, L, S]
    for (let h = 0; h < 2; h++)
      for (let i = 0; i < 5; i++) {
        const row = [0, 1, 2, 3, 4].map((j) => w.get(0, h, i, j));
        if (i < 2)
          expect(row.reduce((a, v) => a + v, 0)).toBeCloseTo(1, 6); // never sees key 2
        else expect(row.every(Number.isNaN)).toBe(true);
      }
    // And so is their context: query 0 gives key 2 a weight of exactly 0, so key 2's NaN value row adds nothing to it
    // (FlashAttention semantics, docs/reliability.md; PyTorch's math path would give 0 · NaN = NaN). Queries that see
    // key 2 are NaN: a NaN is never turned into a number.
    const ctx = out.taps.get("context")!; // [B, L, E]
    for (let i = 0; i < 5; i++)
      expect([0, 1, 2, 3].every((e) => (i < 2 ? Number.isFinite : Number.isNaN)(ctx.get(0, i, e)))).toBe(true);
  });

  // Found by this suite: the fused kernels skip key blocks (64 keys) that the causal mask hides from a whole query block,
  // so a NaN value row there cannot reach those queries. Decided (docs/reliability.md): a key weighed exactly 0 adds
  // nothing, so the unfused chain and the reference agree with them, and queries before token 90 stay finite.
  it("fused and unfused agree on a NaN value row hidden from a whole key block (T > 64): earlier queries stay finite", async () => {
    const m = materialize(causalCase(1, 100));
    m.inputs.x!.data[90 * 4] = NaN;
    const ex = await entry.create();
    const fused = dense((await runCase(m, ex, false)).output);
    const unfused = dense((await runCase(m, ex, true)).output);
    expect(mismatch("fused vs unfused", fused, unfused, { abs: 1e-5, rel: 1e-5 }, true)).toBeUndefined();
    const out = Array.from(fused.data);
    expect(out.slice(0, 90 * 4).every(Number.isFinite), "queries 0..89 never see token 90").toBe(true);
    expect(out.slice(90 * 4).every(Number.isNaN), "queries 90..99 see it").toBe(true);
  });

  it("a key padding flag other than 0 or 1 (NaN, 2) is a RunError naming the mask input, and the session stays usable", async () => {
    const config = normalizeConfig({ dIn: 4, dOut: 4, numHeads: 1 });
    const m = materialize({ config, fusedQkv: false, B: 1, T: 3, S: 3, padding: true, magnitude: 1, seed: 1 });
    const s = await compile(m.graph, { executors: [await entry.create()], weights: m.weights });
    for (const bad of [NaN, 2, -1]) {
      const pad = Tensor.from([0, bad, 0], [1, 3]);
      const err = await s.run({ x: m.inputs.x!, keyPaddingMask: pad }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RunError);
      expect(AttnGraphError.isInstance(err) && err.code).toBe("input");
      expect((err as Error).message).toMatch(
        /keyPaddingMask: key padding values must be 1 \(padded key\) or 0 \(real key\), expected 0 or 1, got .* at \[0, 1\]/,
      );
    }
    expect((await s.run({ x: m.inputs.x!, keyPaddingMask: Tensor.from([0, 1, 0], [1, 3]) })).output!.shape).toEqual([
      1, 3, 4,
    ]);
  });
});

describe.each(executors.map((e) => [e.name, e] as const))("%s: empty sequences", (name, entry) => {
  // Decision: an empty sequence is not an error. T = 0 (or B = 0) gives empty outputs of the right shape and empty
  // taps; S = 0 keys (cross-attention over nothing) gives rows with every key hidden: weights [B, H, L, 0], context
  // zeros and output the bias, as FORMAT.md says of fully masked rows.
  const cases: [string, AttentionCase][] = [
    [
      "T = 0, causal",
      {
        config: normalizeConfig({ dIn: 4, dOut: 8, numHeads: 2, causal: true, qkvBias: true }),
        fusedQkv: false,
        B: 2,
        T: 0,
        S: 0,
        padding: false,
        magnitude: 1,
        seed: 1,
      },
    ],
    [
      "T = 0, padded, fused QKV",
      {
        config: normalizeConfig({ dIn: 4, dOut: 8, numHeads: 2 }),
        fusedQkv: true,
        B: 1,
        T: 0,
        S: 0,
        padding: true,
        magnitude: 1,
        seed: 2,
      },
    ],
    [
      "B = 0",
      {
        config: normalizeConfig({ dIn: 4, dOut: 8, numHeads: 2, numKvHeads: 1 }),
        fusedQkv: false,
        B: 0,
        T: 3,
        S: 3,
        padding: false,
        magnitude: 1,
        seed: 3,
      },
    ],
    [
      "cross, S = 0 keys",
      {
        config: normalizeConfig({ dIn: 4, dOut: 8, numHeads: 2, cross: true }),
        fusedQkv: false,
        B: 2,
        T: 3,
        S: 0,
        padding: false,
        magnitude: 1,
        seed: 4,
      },
    ],
    [
      "cross, T = 0 queries",
      {
        config: normalizeConfig({ dIn: 4, dOut: 8, numHeads: 2, cross: true }),
        fusedQkv: false,
        B: 1,
        T: 0,
        S: 4,
        padding: true,
        magnitude: 1,
        seed: 5,
      },
    ],
  ];
  it.each(cases)("%s: outputs and taps of the right (empty) shapes, equal to the reference", async (_, c) => {
    const ex = await entry.create();
    const m = materialize(c);
    const ref = referenceAttention(c.config, m.raw, m.inputs);
    for (const tapped of [false, true]) {
      const out = await within(runCase(m, ex, tapped), hangDeadline(entry), `${name} ${describeCase(c)}`);
      expect(mismatch("output", dense(out.output), ref.output, toleranceFor(ref.output))).toBeUndefined();
      for (const [n, t] of out.taps)
        expect(
          mismatch(
            `tap ${n}`,
            dense(t),
            ref[n as (typeof NAMES)[number]],
            toleranceFor(ref[n as (typeof NAMES)[number]]),
          ),
        ).toBeUndefined();
      if (tapped) expect(out.taps.get("weights")!.shape).toEqual([c.B, c.config.numHeads, c.T, c.S]);
    }
    if (c.S === 0 && c.T > 0) expect(ref.output.data.some((v) => v !== 0)).toBe(true); // the bias: not an all-zero case
  });
});

describe.each(executors.map((e) => [e.name, e] as const))("%s: shapes too large for memory", (name, entry) => {
  // x [1, 1e6, 4096] as a view of one float (strides 0): the run must refuse before allocating anything.
  const huge = (shape: number[]) =>
    new Tensor(
      new Float32Array(1),
      shape,
      shape.map(() => 0),
    );
  const config = normalizeConfig({ dIn: 4096, dOut: 4096, numHeads: 32 });
  const weights = () => {
    const raw = Object.fromEntries(["W_query", "W_key", "W_value", "out_proj"].map((n) => [n, huge([4096, 4096])]));
    return attentionWeights(config, { ...raw, out_bias: huge([4096]) });
  };

  it("x [1, 1e6, 4096]: a MemoryLimitError naming the node and the bytes, before any kernel runs or arena is made", async () => {
    const ex = await entry.create();
    const calls: string[] = [];
    // The spy has an arena exactly when the executor has one (webgpu has none: a spy with one would test another plan).
    const arena = ex.createArena ? { createArena: (n: number) => (calls.push(`arena ${n}`), ex.createArena!(n)) } : {};
    const spy = {
      ...bindAll(ex),
      ...arena,
      dispatch: (c: Parameters<typeof ex.dispatch>[0]) => (calls.push(c.node), ex.dispatch(c)),
    };
    const s = await compile(buildAttention(config), { executors: [spy], weights: weights() });
    const events: SessionEvent[] = [];
    s.events$.subscribe((e) => events.push(e));
    const before = process.memoryUsage().arrayBuffers;
    const err = await within(s.run({ x: huge([1, 1e6, 4096]) }), hangDeadline(entry), "huge run").catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(MemoryLimitError);
    expect(AttnGraphError.isInstance(err) && err.code).toBe("memory-limit");
    expect((err as MemoryLimitError).subject).toBe("node queries");
    expect((err as Error).message).toMatch(
      /node queries: its output \[1, 1000000, 4096\] \(float32\) needs 15\.3 GiB \(16384000000 bytes\), over the limit of 4\.0 GiB/,
    );
    expect(calls).toEqual([]);
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(64 * 1024 ** 2);
    expect(events.at(-1)).toMatchObject({ type: "run-error", runId: 1 });
    expect(events.some((e) => e.type === "node-start")).toBe(false);
  });

  it("a tapped [B, H, L, S] of 128 TB names `scores`; the untapped (fused) plan never holds it and names `queries`", async () => {
    const s = await compile(buildAttention(config), { executors: [await entry.create()], weights: weights() });
    const sub = s.tap("weights").subscribe();
    // maxArenaBytes is large enough for queries [1, 1e6, 4096] (16 GB) but not for [1, 32, 1e6, 1e6].
    const s2 = await compile(buildAttention(config), {
      executors: [await entry.create()],
      weights: weights(),
      maxArenaBytes: 2 ** 40,
    });
    const sub2 = s2.tap("weights").subscribe();
    const err = await s2.run({ x: huge([1, 1e6, 4096]) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MemoryLimitError);
    expect((err as MemoryLimitError).subject).toBe("node scores");
    expect((err as Error).message).toMatch(/\[1, 32, 1000000, 1000000\]/);
    sub.unsubscribe();
    sub2.unsubscribe();
    expect(((await s.run({ x: huge([1, 1e6, 4096]) }).catch((e: unknown) => e)) as MemoryLimitError).subject).toBe(
      "node queries",
    );
  });

  it("the limit is a compile option checked up front: 0, -1, NaN and a string are refused", async () => {
    const m = materialize({
      config: normalizeConfig({ dIn: 8, dOut: 8, numHeads: 2 }),
      fusedQkv: false,
      B: 1,
      T: 4,
      S: 4,
      padding: false,
      magnitude: 1,
      seed: 1,
    });
    for (const bad of [0, -1, NaN, "1GB"]) {
      await expect(
        compile(m.graph, { executors: [await entry.create()], weights: m.weights, maxArenaBytes: bad as number }),
      ).rejects.toThrow(/compile\.maxArenaBytes: invalid memory limit/);
    }
  });

  const arenaReason = NO_ARENA[name];
  if (arenaReason !== undefined) {
    // Not applicable, by name: checks that the reason still holds, so the exclusion cannot outlive it.
    it(`the arena limit does not apply: ${arenaReason}`, async () => {
      expect((await entry.create()).createArena).toBeUndefined();
    });
    return;
  }

  it("the arena as a whole is limited too; the session stays usable for shapes that fit", async () => {
    expect(typeof (await entry.create()).createArena, `${name} has no arena: list it in NO_ARENA with the reason`).toBe(
      "function",
    );
    const small = normalizeConfig({ dIn: 8, dOut: 8, numHeads: 2 });
    const m = materialize({
      config: small,
      fusedQkv: false,
      B: 1,
      T: 64,
      S: 64,
      padding: false,
      magnitude: 1,
      seed: 1,
    });
    // Every single value is [1, 64, 8] = 2 KiB; three of them live at once, so a 4 KiB arena limit is exceeded.
    const s = await compile(m.graph, { executors: [await entry.create()], weights: m.weights, maxArenaBytes: 4096 });
    const err = await s.run(m.inputs).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MemoryLimitError);
    expect((err as Error).message).toMatch(
      new RegExp(`arena on ${name}: the planned arena \\(largest value: node \\w+\\) needs`),
    );
    // The session stays usable: a shorter sequence fits and is computed correctly.
    const short = { x: new Tensor(m.inputs.x!.data.subarray(0, 8 * 8), [1, 8, 8]) };
    const ref = referenceAttention(small, m.raw, short);
    expect(
      mismatch("output", dense((await s.run(short)).output!), ref.output, toleranceFor(ref.output)),
    ).toBeUndefined();
  });
});

/** An executor's methods as own properties bound to it, so a spread copy keeps working. */
function bindAll<T extends object>(ex: T): T {
  const out: Record<string, unknown> = {};
  let proto: object | null = ex;
  while (proto && proto !== Object.prototype) {
    for (const k of Object.getOwnPropertyNames(proto)) {
      const d = Object.getOwnPropertyDescriptor(proto, k)!;
      if (k === "constructor" || k in out || !("value" in d)) continue; // getters stay behind (they may throw before init)
      out[k] = typeof d.value === "function" ? (d.value as (...a: unknown[]) => unknown).bind(ex) : d.value;
    }
    proto = Object.getPrototypeOf(proto) as object | null;
  }
  return out as T;
}
