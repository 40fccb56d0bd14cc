// --problem gpt2 on a tiny GPT-2 (2 layers, n_embd 16, vocabulary 97): every implementation's last-position logits of
// a prompt and of a token after a cached prompt match a float64 GPT-2 forward written here from the model's definition
// (Hugging Face's GPT2Model, Conv1D weights as they lie); the greedy generations agree with that forward's argmax; the
// rows carry what the results file promises; the command line takes --t, --phase and --generate.
import { describe, expect, it } from "vitest";
import { parseCli, UsageError } from "../cli.js";
import { attngraphGpt2Impl } from "./attngraph.js";
import { gpt2Cases, gpt2Main } from "./main.js";
import { causalBias } from "./onnx-model.js";
import { ortGpt2Impl } from "./ort.js";
import { gpt2Parameters, makeGpt2Problem, type Gpt2Problem, type Gpt2Sizes } from "./problem.js";
import type { Gpt2Results } from "./run.js";

const SIZES: Gpt2Sizes = { vocab: 97, positions: 24, layers: 2, heads: 2, embd: 16 };
const p = makeGpt2Problem(SIZES, 5);

/** The last position's logits of GPT-2 on `ids`, in float64 (Hugging Face's forward: pre-norm, tanh GELU, tied head). */
function reference(p: Gpt2Problem, ids: readonly number[]): Float64Array {
  const { embd: E, heads: H, layers, vocab: V } = p.sizes;
  const D = E / H;
  const w = (name: string) => p.stateDict.get(name)!.data;
  const T = ids.length;
  let x = ids.map((id, t) =>
    Float64Array.from({ length: E }, (_, e) => w("wte.weight")[id * E + e]! + w("wpe.weight")[t * E + e]!),
  );
  const norm = (v: Float64Array, name: string) => {
    const mean = v.reduce((a, b) => a + b, 0) / E;
    const variance = v.reduce((a, b) => a + (b - mean) ** 2, 0) / E;
    const r = 1 / Math.sqrt(variance + p.eps);
    return v.map((y, e) => (y - mean) * r * w(`${name}.weight`)[e]! + w(`${name}.bias`)[e]!);
  };
  const conv1d = (v: Float64Array, name: string, out: number) =>
    Float64Array.from({ length: out }, (_, o) => {
      let acc = w(`${name}.bias`)[o]!;
      for (let i = 0; i < v.length; i++) acc += v[i]! * w(`${name}.weight`)[i * out + o]!;
      return acc;
    });
  const gelu = (y: number) => 0.5 * y * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (y + 0.044715 * y ** 3)));
  for (let l = 0; l < layers; l++) {
    const qkv = x.map((v) => conv1d(norm(v, `h.${l}.ln_1`), `h.${l}.attn.c_attn`, 3 * E));
    const ctx = x.map((_, i) => {
      const out = new Float64Array(E);
      for (let h = 0; h < H; h++) {
        const s = Array.from({ length: i + 1 }, (_, j) => {
          let dot = 0;
          for (let d = 0; d < D; d++) dot += qkv[i]![h * D + d]! * qkv[j]![E + h * D + d]!;
          return dot / Math.sqrt(D);
        });
        const max = Math.max(...s);
        const e = s.map((v) => Math.exp(v - max));
        const sum = e.reduce((a, b) => a + b, 0);
        for (let j = 0; j <= i; j++)
          for (let d = 0; d < D; d++) out[h * D + d] = out[h * D + d]! + (e[j]! / sum) * qkv[j]![2 * E + h * D + d]!;
      }
      return out;
    });
    x = x.map((v, i) => v.map((y, e) => y + conv1d(ctx[i]!, `h.${l}.attn.c_proj`, E)[e]!));
    x = x.map((v) => {
      const hidden = conv1d(norm(v, `h.${l}.ln_2`), `h.${l}.mlp.c_fc`, 4 * E).map(gelu);
      const mlp = conv1d(hidden, `h.${l}.mlp.c_proj`, E);
      return v.map((y, e) => y + mlp[e]!);
    });
  }
  const last = norm(x[T - 1]!, "ln_f");
  return Float64Array.from({ length: V }, (_, v) => last.reduce((a, y, e) => a + y * w("wte.weight")[v * E + e]!, 0));
}

const maxRel = (got: Float32Array, want: Float64Array) => {
  const scale = Math.max(...Array.from(want, Math.abs));
  return Math.max(...Array.from(got, (g, i) => Math.abs(g - want[i]!))) / scale;
};
const argmax = (v: ArrayLike<number>) => Array.from(v).reduce((best, y, i, a) => (y > a[best]! ? i : best), 0);
const impls = [attngraphGpt2Impl("cpu"), attngraphGpt2Impl("wasm"), ortGpt2Impl("web"), ortGpt2Impl("node")];

describe("--problem gpt2 on a tiny GPT-2", () => {
  it.each(impls.map((i) => [i.name, i] as const))(
    "%s: prefill and decode give the float64 forward's last-position logits",
    async (_name, impl) => {
      const r = await impl.setup(p, { threads: 1 });
      try {
        for (const t of [1, 7, 23]) {
          const ids = Array.from(p.prompt.subarray(0, t));
          expect(maxRel(await r.prefill(t), reference(p, ids))).toBeLessThan(1e-5);
          if (t === 23) continue;
          await r.preparePast(t);
          for (let k = 0; k < 2; k++)
            expect(maxRel(await r.decode(t), reference(p, [...ids, p.token]))).toBeLessThan(1e-5);
        }
      } finally {
        await r.dispose();
      }
    },
  );

  it.each(impls.map((i) => [i.name, i] as const))(
    "%s: greedy generation is the float64 forward's argmax",
    async (_n, impl) => {
      const g = await impl.generate(p, { threads: 1 }, 5, 4);
      const seq = Array.from(p.prompt.subarray(0, 5));
      for (let k = 0; k < 4; k++) seq.push(argmax(reference(p, seq)));
      expect(g.tokens).toEqual(seq.slice(5));
      expect(g.atMs).toHaveLength(4);
      expect(g.atMs.every((t, i) => t > 0 && (i === 0 || t >= g.atMs[i - 1]!))).toBe(true);
    },
  );

  it("the whole run: rows with phase, t, medianMs, tokens per second, setup and memory; logits checked; generation rows", async () => {
    const options = {
      ...parseCli(["--problem", "gpt2", "--t", "6,20", "--runs", "3", "--warmup", "1", "--generate", "3"]),
      json: "/dev/null",
    };
    const out: string[] = [];
    let results: Gpt2Results | undefined;
    const status = await gpt2Main(options, { out: (l) => out.push(l), err: () => undefined }, impls.slice(1, 3), {
      sizes: SIZES,
      onResults: (r) => void (results = r),
    });
    expect(status).toBe(0);
    const rows = results!.rows;
    expect(rows.map((r) => `${r.phase} ${r.t} ${r.impl}`)).toEqual([
      "prefill 6 wasm",
      "prefill 20 wasm",
      "decode 6 wasm",
      "decode 20 wasm",
      "prefill 6 ort-web",
      "prefill 20 ort-web",
      "decode 6 ort-web",
      "decode 20 ort-web",
    ]);
    for (const r of rows) {
      expect(r.status).toBe("ok");
      expect(r.medianMs).toBeGreaterThan(0);
      expect(r.tokensPerS).toBeCloseTo(((r.phase === "prefill" ? r.t : 1) * 1000) / r.medianMs!, 6);
      expect(r.setupMs).toBeGreaterThan(0);
      expect(r.relDiff).toBeLessThan(1e-5);
    }
    expect(results!.generation.map((g) => [g.impl, g.status, g.tokens.length])).toEqual([
      ["wasm", "ok", 3],
      ["ort-web", "ok", 3],
    ]);
    expect(results!.meta.parameters).toBe(gpt2Parameters(SIZES));
    const text = out.join("\n");
    expect(text).toMatch(/prefill: the prompt's T tokens/);
    expect(text).toMatch(/first token ms/);
  }, 60_000);

  it("a wrong implementation is a MISMATCH and exit status 1", async () => {
    const wasm = attngraphGpt2Impl("wasm");
    const broken = {
      ...ortGpt2Impl("web"),
      name: "broken",
      async setup(q: Gpt2Problem, o: { threads: number }) {
        const r = await ortGpt2Impl("web").setup(q, o);
        return { ...r, prefill: async (t: number) => (await r.prefill(t)).map((v, i) => (i === 3 ? v + 1 : v)) };
      },
    };
    const options = {
      ...parseCli([
        "--problem",
        "gpt2",
        "--t",
        "4",
        "--phase",
        "prefill",
        "--runs",
        "1",
        "--warmup",
        "0",
        "--generate",
        "0",
      ]),
      json: "/dev/null",
    };
    let results: Gpt2Results | undefined;
    const status = await gpt2Main(
      options,
      { out: () => undefined, err: () => undefined },
      [wasm, ortGpt2Impl("web"), broken],
      {
        sizes: SIZES,
        onResults: (r) => void (results = r),
      },
    );
    expect(status).toBe(1);
    expect(results!.rows.map((r) => r.status)).toEqual(["ok", "ok", "mismatch"]);
  }, 60_000);

  it("the causal bias of S new positions after P cached ones hides exactly the later keys", () => {
    const b = causalBias(2, 3); // [2, 5]
    expect(Array.from(b)).toEqual([0, 0, 0, 0, -Infinity, 0, 0, 0, 0, 0]);
  });
});

describe("--problem gpt2 on the command line", () => {
  it("--t, --phase and --generate; the cases they make", () => {
    const o = parseCli(["--problem", "gpt2", "--t", "128,1024", "--phase", "decode,prefill", "--generate", "0"]);
    expect([o.lengths, o.phases, o.generate]).toEqual([[128, 1024], ["decode", "prefill"], 0]);
    expect(gpt2Cases(o)).toEqual([
      { phase: "decode", t: 128 },
      { phase: "prefill", t: 128 },
      { phase: "prefill", t: 1024 },
    ]);
    expect(gpt2Cases(parseCli(["--problem", "gpt2"]))).toHaveLength(5);
  });

  it("refuses what does not apply", () => {
    expect(() => parseCli(["--problem", "gpt2", "--shape", "1,128,768,12"])).toThrow(UsageError);
    expect(() => parseCli(["--problem", "decode", "--phase", "prefill"])).toThrow(/only with --problem gpt2/);
    expect(() => parseCli(["--problem", "gpt2", "--phase", "sample"])).toThrow(UsageError);
    expect(() => gpt2Cases(parseCli(["--problem", "gpt2", "--t", "2048"]))).toThrow(/1024 positions/);
  });
});
