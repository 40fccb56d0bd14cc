// The decode session on cpu: token-by-token decoding equals one full causal run, the cache is tappable, and every
// misuse (overflow, another batch, a graph without a cache, truncate past the end) is a typed error that leaves the
// decoder usable. The same equality on every executor and variant lives in @attngraph/reliability (decode.test.ts).
import { addAttention, attentionWeights, buildAttention, ConfigError } from "@attngraph/attention";
import { DECODE_DIMS, GraphBuilder } from "@attngraph/graph";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { Tensor } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { compile } from "./compile.js";
import { CacheOverflowError, compileDecoder, DecodeError } from "./decoder.js";
import { randomTensor, rawAttentionWeights } from "./test-random.js";

const config = { dIn: 8, dOut: 8, numHeads: 2, causal: true, outProj: true };
const raw = rawAttentionWeights(config);
const weights = attentionWeights(config, raw);
const [B, T] = [2, 6];
const x = randomTensor([B, T, 8], 6);

/** Positions [from, to) of x [B, T, E] as a dense tensor. */
function tokens(t: Tensor, from: number, to: number): Tensor {
  const [b, , e] = t.shape as [number, number, number];
  const src = t.toFloat32Array();
  const out = new Float32Array(b * (to - from) * e);
  for (let i = 0; i < b; i++)
    out.set(src.subarray((i * t.shape[1]! + from) * e, (i * t.shape[1]! + to) * e), i * (to - from) * e);
  return new Tensor(out, [b, to - from, e]);
}

/** A decoder of the attention layer on cpu with this file's weights, batch B. */
function cpuDecoder(maxLength: number, cfg: typeof config & { window?: number } = config) {
  return compileDecoder(buildAttention(cfg, { decode: true }), {
    executors: [createCpuExecutor()],
    weights,
    maxLength,
    batch: B,
  });
}

async function fullRun(): Promise<Tensor> {
  const s = await compile(buildAttention(config), { executors: [createCpuExecutor()], weights });
  try {
    return (await s.run({ x })).output!;
  } finally {
    await s.dispose();
  }
}

describe("compileDecoder on cpu", () => {
  it("a prompt of 3 then one token at a time gives the full causal run's outputs; the cache is tapped at every call", async () => {
    const full = await fullRun();
    const dec = await cpuDecoder(16);
    const cached: number[][] = [];
    const sub = dec.session.tap("k.cache").subscribe((e) => cached.push([...e.tensor.shape]));
    for (const [from, to] of [
      [0, 3],
      [3, 4],
      [4, 5],
      [5, 6],
    ] as const) {
      const out = (await dec.step({ x: tokens(x, from, to) })).output!;
      expect(out.shape).toEqual([B, to - from, 8]);
      const want = tokens(full, from, to).toFloat32Array();
      const got = out.toFloat32Array();
      for (let i = 0; i < want.length; i++) expect(Math.abs(got[i]! - want[i]!)).toBeLessThan(1e-5);
      expect(dec.length).toBe(to);
    }
    sub.unsubscribe();
    expect(cached).toEqual([
      [B, 2, 3, 4],
      [B, 2, 4, 4],
      [B, 2, 5, 4],
      [B, 2, 6, 4],
    ]);
    await dec.dispose();
  });

  it("learned positions (position-embedding with offset N) are bound per step: decoding equals the full run", async () => {
    // GPT-2's input: wte[ids] + wpe[offset..offset+T-1], then a causal block. The decode graph names N, the absolute
    // position of this call's first token, which the decoder binds from the positions decoded so far.
    const gpt = (decode: boolean) => {
      const b = new GraphBuilder();
      const ids = b.input("ids", ["B", "T"], "int32");
      const tok = b.add("embedding", "tok", { ids, weight: b.weight("wte", [5, 8]) });
      const pos = b.add(
        "position-embedding",
        "pos",
        { ids, weight: b.weight("wpe", [T, 8]) },
        { offset: decode ? DECODE_DIMS.position : 0 },
      );
      return b.output(addAttention(b, b.add("add", "h", { a: tok, b: pos }), config, { decode }).output).build();
    };
    const all = { ...weights, wte: randomTensor([5, 8], 7), wpe: randomTensor([T, 8], 8) };
    const ids = Tensor.int32([0, 4, 2, 2, 1, 3, 3, 1, 0, 4, 4, 2], [B, T]);
    const columns = (from: number, to: number) =>
      Tensor.int32(
        Array.from(
          { length: B * (to - from) },
          (_, k) => ids.toInt32Array()[Math.floor(k / (to - from)) * T + from + (k % (to - from))]!,
        ),
        [B, to - from],
      );
    const s = await compile(gpt(false), { executors: [createCpuExecutor()], weights: all });
    const full = (await s.run({ ids })).output!;
    await s.dispose();
    const dec = await compileDecoder(gpt(true), {
      executors: [createCpuExecutor()],
      weights: all,
      maxLength: 16,
      batch: B,
    });
    for (const [from, to] of [
      [0, 2],
      [2, 3],
      [3, 5],
      [5, 6],
    ] as const) {
      const got = (await dec.step({ ids: columns(from, to) })).output!.toFloat32Array();
      const want = tokens(full, from, to).toFloat32Array();
      for (let i = 0; i < want.length; i++)
        expect(Math.abs(got[i]! - want[i]!), `positions ${from}..${to - 1}`).toBeLessThan(1e-5);
    }
    // A 7th position runs past the table's T = 6 rows: the step fails naming the node, and the decoder goes on.
    await expect(dec.step({ ids: columns(0, 1) })).rejects.toThrow(
      /pos\.offset: positions 6\.\.6 run past the table's P rows/,
    );
    expect(dec.length).toBe(T);
    await dec.dispose();
  });

  it("reset() starts a new sequence and truncate(n) rewinds: the same tokens give the same outputs again", async () => {
    const dec = await cpuDecoder(8);
    const first = (await dec.step({ x: tokens(x, 0, 4) })).output!.toFloat32Array();
    const fifth = (await dec.step({ x: tokens(x, 4, 5) })).output!.toFloat32Array();
    dec.truncate(4);
    expect(dec.length).toBe(4);
    expect((await dec.step({ x: tokens(x, 4, 5) })).output!.toFloat32Array()).toEqual(fifth);
    dec.reset();
    expect(dec.length).toBe(0);
    expect((await dec.step({ x: tokens(x, 0, 4) })).output!.toFloat32Array()).toEqual(first);
    expect(() => dec.truncate(5)).toThrow(DecodeError);
    await dec.dispose();
  });

  it("more positions than maxLength is a CacheOverflowError naming the cache; nothing changes and the decoder goes on", async () => {
    const dec = await cpuDecoder(5);
    await dec.step({ x: tokens(x, 0, 4) });
    const err = await dec.step({ x: tokens(x, 4, 6) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CacheOverflowError);
    expect((err as CacheOverflowError).code).toBe("cache-overflow");
    expect((err as Error).message).toContain("k.cache.state: 2 new positions after 4 do not fit in the cache");
    expect(dec.length).toBe(4);
    await dec.step({ x: tokens(x, 4, 5) });
    expect(dec.length).toBe(5);
    await dec.dispose();
  });

  it("a sliding window decodes past maxLength (its ring keeps the last w − 1 positions); truncate cannot reach what it dropped", async () => {
    const windowed = { ...config, window: 2 };
    const full = await compile(buildAttention(windowed), { executors: [createCpuExecutor()], weights });
    const want = (await full.run({ x })).output!;
    await full.dispose();
    const dec = await cpuDecoder(3, windowed);
    const cached: number[] = [];
    for (let at = 0; at < T; at++) {
      const got = (await dec.step({ x: tokens(x, at, at + 1) })).output!.toFloat32Array();
      const ref = tokens(want, at, at + 1).toFloat32Array();
      for (let i = 0; i < ref.length; i++) expect(Math.abs(got[i]! - ref[i]!)).toBeLessThan(1e-5);
      cached.push(dec.cached);
    }
    // Full at 3 positions, the fourth step keeps the last one (w − 1 = 1) and appends: 2, then 3 again, and so on.
    expect(cached).toEqual([1, 2, 3, 2, 3, 2]);
    expect(dec.length).toBe(T);
    expect(() => dec.truncate(T - 3)).toThrow(/the window's ring dropped the positions before 4/);
    dec.truncate(T - 1);
    expect([dec.length, dec.cached]).toEqual([T - 1, 1]);
    // Three new tokens after the one kept position do not fit in 3: a CacheOverflowError that says why.
    await expect(dec.step({ x: tokens(x, 0, 3) })).rejects.toThrow(
      /3 new positions after the 1 a window keeps do not fit in the cache/,
    );
    const nonWindowed = await cpuDecoder(3);
    await nonWindowed.step({ x: tokens(x, 0, 3) });
    await expect(nonWindowed.step({ x: tokens(x, 3, 4) })).rejects.toBeInstanceOf(CacheOverflowError);
    await Promise.all([dec.dispose(), nonWindowed.dispose()]);
  });

  it("a failed step goes on from the positions before it; a failed ring step refuses every step until reset()", async () => {
    const windowed = { ...config, window: 4 };
    const long = randomTensor([B, 9, 8], 7);
    const full = await compile(buildAttention(windowed), { executors: [createCpuExecutor()], weights });
    const want = (await full.run({ x: long })).output!;
    await full.dispose();
    const dec = await cpuDecoder(5, windowed);
    const expectStep = async (at: number) => {
      const got = (await dec.step({ x: tokens(long, at, at + 1) })).output!.toFloat32Array();
      const ref = tokens(want, at, at + 1).toFloat32Array();
      for (let i = 0; i < ref.length; i++) expect(Math.abs(got[i]! - ref[i]!)).toBeLessThan(1e-5);
    };
    // A failure after the caches were written (the output node throws), cache not yet full: the step can be redone.
    await expectStep(0);
    let unpatch = dec.session.patch("output", () => {
      throw new Error("injected");
    });
    await expect(dec.step({ x: tokens(long, 1, 2) })).rejects.toThrow(/injected/);
    unpatch();
    for (let at = 1; at < 5; at++) await expectStep(at);
    // The cache is full: the next step moves the ring (keeps the last 3 positions over the first 2). Failing after
    // that move, a retry would move the moved positions again (silently wrong outputs): every step refuses instead.
    unpatch = dec.session.patch("output", () => {
      throw new Error("injected");
    });
    await expect(dec.step({ x: tokens(long, 5, 6) })).rejects.toThrow(/injected/);
    unpatch();
    await expect(dec.step({ x: tokens(long, 5, 6) })).rejects.toThrow(
      /^decoder: a step that moved the window's ring \(dropping 2 positions\) failed, so the caches' positions are unknown \(expected reset\(\) \(or truncate\(0\)\) first/,
    );
    expect(() => dec.truncate(4)).toThrow(DecodeError);
    dec.reset();
    for (let at = 0; at < 9; at++) await expectStep(at);
    await dec.dispose();
  });

  it("memoryPlan gives the next step's buffer plan at the current length and throws what the step would", async () => {
    const dec = await cpuDecoder(8);
    const plan = (n: number) => dec.memoryPlan({ x: [B, n, 8] });
    expect(plan(1).peakBytes).toBeGreaterThan(0);
    expect(plan(4).unplannedBytes).toBeGreaterThan(plan(1).unplannedBytes);
    await dec.step({ x: tokens(x, 0, 4) });
    expect(plan(1).peakBytes).toBeGreaterThan(0);
    expect(() => plan(5)).toThrow(CacheOverflowError);
    expect(() => dec.memoryPlan({ x: [3, 1, 8] })).toThrow(/the batch differs from the cache's/);
    await dec.dispose();
  });

  it("another batch than the cache's is a DecodeError naming the input, before anything runs", async () => {
    const dec = await cpuDecoder(8);
    const err = await dec.step({ x: randomTensor([3, 1, 8], 9) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DecodeError);
    expect((err as Error).message).toBe(
      "input x: the batch differs from the cache's (dim 0) (expected batch 2 (compileDecoder's batch), got batch 3)",
    );
    expect(dec.length).toBe(0);
    await dec.dispose();
  });

  it("refuses a graph without a cache, a non-causal decode graph (saying why), and a cache passed as a weight", async () => {
    await expect(
      compileDecoder(buildAttention(config), { executors: [createCpuExecutor()], weights, maxLength: 8 }),
    ).rejects.toThrow(/no kv-append node/);
    expect(() => buildAttention({ ...config, causal: false }, { decode: true })).toThrow(ConfigError);
    expect(() => buildAttention({ ...config, causal: false }, { decode: true })).toThrow(
      /decode: needs causal attention: otherwise earlier tokens attend to later ones/,
    );
    const graph = buildAttention(config, { decode: true });
    await expect(
      compileDecoder(graph, {
        executors: [createCpuExecutor()],
        weights: { ...weights, "k.cache.state": Tensor.zeros([1, 2, 8, 4]) },
        maxLength: 8,
      }),
    ).rejects.toThrow(/a cache is the decoder's own state/);
    await expect(compileDecoder(graph, { executors: [createCpuExecutor()], weights, maxLength: 0 })).rejects.toThrow(
      DecodeError,
    );
  });

  it("reset() or truncate() while a step is queued is refused (it would run first, and the step lose its prefix)", async () => {
    const full = await fullRun();
    const dec = await cpuDecoder(16);
    await dec.step({ x: tokens(x, 0, 3) });
    const p = dec.step({ x: tokens(x, 3, 4) }); // queued: not awaited
    expect(() => dec.reset()).toThrow(DecodeError);
    expect(() => dec.truncate(2)).toThrow(/decoder: a step is queued or running; truncate or reset after it settles/);
    const out = (await p).output!.toFloat32Array();
    const want = tokens(full, 3, 4).toFloat32Array();
    for (let i = 0; i < want.length; i++) expect(Math.abs(out[i]! - want[i]!), `output[${i}]`).toBeLessThan(1e-5);
    expect(dec.length).toBe(4);
    // Settled (even by a failure): reset and truncate work again.
    const failing = dec.step({ x: Tensor.zeros([B + 1, 1, 8]) });
    expect(() => dec.truncate(3)).toThrow(DecodeError);
    await expect(failing).rejects.toThrow(DecodeError);
    dec.truncate(3);
    expect(dec.length).toBe(3);
    dec.reset();
    expect(dec.length).toBe(0);
    await dec.dispose();
  });

  it("inputs that are not tensors, and caches larger than memory allows, are typed errors", async () => {
    const graph = buildAttention(config, { decode: true });
    const dec = await compileDecoder(graph, { executors: [createCpuExecutor()], weights, maxLength: 8, batch: B });
    await expect(dec.step(null as never)).rejects.toThrow(
      /run inputs: invalid inputs, expected an object of tensors by name, got null/,
    );
    await expect(dec.step({ x: null as never })).rejects.toThrow(/input x: not a tensor/);
    await expect(dec.step({ x: { shape: [B, 1, 8] } as never })).rejects.toThrow(/input x: not a tensor/);
    expect((await dec.step({ x: tokens(x, 0, 2) })).output!.shape).toEqual([B, 2, 8]); // still usable
    await dec.dispose();
    for (const maxLength of [2 ** 31 - 1, 2 ** 28]) {
      const e = await compileDecoder(graph, { executors: [createCpuExecutor()], weights, maxLength }).catch(
        (err: unknown) => err,
      );
      expect(e, `maxLength ${maxLength}`).toBeInstanceOf(DecodeError);
      expect((e as DecodeError).code).toBe("memory-limit");
      expect((e as Error).message).toMatch(
        /compileDecoder\.maxLength: the cache k\.cache\.state \[1, 2, \d+, 4\] \(float32\) needs \d+ bytes/,
      );
    }
    // Under a lower limit of the caller's, a smaller cache is refused the same way.
    await expect(
      compileDecoder(graph, { executors: [createCpuExecutor()], weights, maxLength: 1024, maxArenaBytes: 1000 }),
    ).rejects.toThrow(/maxArenaBytes 1000/);
  });
});
