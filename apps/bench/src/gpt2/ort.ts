// onnxruntime's rows of `--problem gpt2`: the model of onnx-model.ts (plain ops, past key/values as inputs) in one
// session. A prefill feeds the prompt with empty pasts; a decode row feeds one token with the pasts its preparation
// computed (the prompt's presents, read back once, outside the timed region) and fetches the logits only, so a
// timed step does not pay for reading the new presents back (a generation loop must: see generate, which feeds every
// step's presents to the next, as an onnxruntime-web user decodes).
import { loadOrt } from "../impls/ort.js";
import { buildGpt2Model, causalBias, GPT2_ONNX } from "./onnx-model.js";
import type { Gpt2Problem } from "./problem.js";
import type { Generation, Gpt2Impl, Gpt2Runner } from "./types.js";

type OrtTensor = { readonly data: unknown; readonly dims: readonly number[] };
interface OrtGpt2 {
  readonly Tensor: new (
    type: "float32" | "int32",
    data: Float32Array | Int32Array,
    dims: readonly number[],
  ) => OrtTensor;
  readonly InferenceSession: {
    create(
      model: Uint8Array,
      options: Record<string, unknown>,
    ): Promise<{
      run(feeds: Record<string, OrtTensor>, fetches?: readonly string[]): Promise<Record<string, OrtTensor>>;
      release(): Promise<void>;
    }>;
  };
}

/** The model's bytes by problem: built once (about 650 MB at GPT-2 small, some seconds), shared by web and node. */
const models = new WeakMap<Gpt2Problem, Uint8Array>();
export function gpt2ModelBytes(p: Gpt2Problem): Uint8Array {
  let bytes = models.get(p);
  if (!bytes) models.set(p, (bytes = buildGpt2Model(p)));
  return bytes;
}

/** A session of the model, and the feeds of one call: `s` new tokens at positions past … past + s − 1. */
async function open(runtime: "web" | "node", p: Gpt2Problem, threads: number) {
  const { ort: loadedOrt, sessionOptions, threads: ran } = await loadOrt(runtime, threads);
  const ort = loadedOrt as unknown as OrtGpt2;
  const start = performance.now();
  const session = await ort.InferenceSession.create(gpt2ModelBytes(p), sessionOptions);
  const { layers, heads, embd } = p.sizes;
  const D = embd / heads;
  const empty = new ort.Tensor("float32", new Float32Array(0), [1, heads, 0, D]);
  const emptyPasts = Object.fromEntries(
    Array.from({ length: layers }, (_, i) => [
      [GPT2_ONNX.pastKey(i), empty],
      [GPT2_ONNX.pastValue(i), empty],
    ]).flat(),
  );
  const feeds = (ids: Int32Array, past: number, pasts: Record<string, OrtTensor>): Record<string, OrtTensor> => ({
    [GPT2_ONNX.ids]: new ort.Tensor("int32", ids, [1, ids.length]),
    [GPT2_ONNX.positions]: new ort.Tensor(
      "int32",
      Int32Array.from(ids, (_, i) => past + i),
      [1, ids.length],
    ),
    [GPT2_ONNX.bias]: new ort.Tensor("float32", causalBias(ids.length, past), [ids.length, past + ids.length]),
    ...pasts,
  });
  /** The presents of a call's outputs, renamed as the next call's pasts. */
  const pastsOf = (out: Record<string, OrtTensor>) =>
    Object.fromEntries(
      Array.from({ length: layers }, (_, i) => [
        [GPT2_ONNX.pastKey(i), out[GPT2_ONNX.presentKey(i)]!],
        [GPT2_ONNX.pastValue(i), out[GPT2_ONNX.presentValue(i)]!],
      ]).flat(),
    );
  const allOutputs = [
    GPT2_ONNX.logits,
    ...Array.from({ length: layers }, (_, i) => [GPT2_ONNX.presentKey(i), GPT2_ONNX.presentValue(i)]).flat(),
  ];
  return { session, feeds, emptyPasts, pastsOf, allOutputs, threads: ran, openMs: performance.now() - start };
}

function logitsOf(out: Record<string, OrtTensor>): Float32Array {
  const data = out[GPT2_ONNX.logits]?.data;
  if (!(data instanceof Float32Array)) throw new Error("logits are not float32 data on the CPU");
  return data;
}

function argmax(v: Float32Array): number {
  let best = 0;
  for (let i = 1; i < v.length; i++) if (v[i]! > v[best]!) best = i;
  return best;
}

export function ortGpt2Impl(runtime: "web" | "node"): Gpt2Impl {
  return {
    name: `ort-${runtime}`,
    family: "peer",
    ...(runtime === "node" ? { onlyWhenNamed: true } : {}),
    async setup(p, { threads }): Promise<Gpt2Runner> {
      const o = await open(runtime, p, threads);
      const logitsOnly = [GPT2_ONNX.logits];
      // Feeds built outside the timed region: the prompts' (by length) and the decode step's after each past.
      const prefillFeeds = new Map<number, Record<string, OrtTensor>>();
      const decodeFeeds = new Map<number, Record<string, OrtTensor>>();
      return {
        threads: o.threads,
        async prefill(t) {
          let f = prefillFeeds.get(t);
          if (!f) prefillFeeds.set(t, (f = o.feeds(p.prompt.slice(0, t), 0, o.emptyPasts)));
          return logitsOf(await o.session.run(f, logitsOnly));
        },
        async preparePast(past) {
          if (decodeFeeds.has(past)) return;
          const out = await o.session.run(o.feeds(p.prompt.slice(0, past), 0, o.emptyPasts), o.allOutputs);
          decodeFeeds.set(past, o.feeds(Int32Array.of(p.token), past, o.pastsOf(out)));
        },
        async decode(past) {
          const f = decodeFeeds.get(past);
          if (!f) throw new Error(`decode(${past}) before preparePast(${past})`);
          return logitsOf(await o.session.run(f, logitsOnly));
        },
        dispose: () => o.session.release(),
      };
    },
    async generate(p, { threads }, promptLength, count): Promise<Generation> {
      gpt2ModelBytes(p); // the bytes are the file in memory: not part of the time
      const start = performance.now();
      const o = await open(runtime, p, threads);
      try {
        const tokens: number[] = [];
        const atMs: number[] = [];
        let out = await o.session.run(o.feeds(p.prompt.slice(0, promptLength), 0, o.emptyPasts), o.allOutputs);
        for (let k = 0; k < count; k++) {
          const token = argmax(logitsOf(out));
          atMs.push(performance.now() - start);
          tokens.push(token);
          if (k + 1 < count)
            out = await o.session.run(o.feeds(Int32Array.of(token), promptLength + k, o.pastsOf(out)), o.allOutputs);
        }
        return { tokens, atMs };
      } finally {
        await o.session.release();
      }
    },
  };
}
