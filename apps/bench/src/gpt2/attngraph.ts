// attngraph's rows of `--problem gpt2`, run the way a user runs a GPT-2 file: loadModel on the state_dict (Hugging
// Face's layout) → model.decoder() (compileDecoder of the decode graph) → decoder.step. A prefill resets the cache
// and steps the prompt; a decode row rewinds the cache to its past (truncate: O(1)) and steps one token, so every
// timed run sees the same cache length. Generation is model.generate, the user's call, greedy.
import { loadModel, type GptModel, type TokenEvent } from "@attngraph/models";
import type { Decoder } from "@attngraph/runtime";
import { Tensor } from "@attngraph/tensor";
import { attngraphExecutors, executorThreads, plannedPeakBytes } from "../impls/attngraph.js";
import type { Gpt2Problem } from "./problem.js";
import type { Generation, Gpt2Impl, Gpt2Runner } from "./types.js";

/** The state_dict as tensors, for loadModel. */
function tensorsOf(p: Gpt2Problem): Record<string, Tensor> {
  return Object.fromEntries([...p.stateDict].map(([name, t]) => [name, new Tensor(t.data, t.shape)]));
}

async function loaded(name: string, p: Gpt2Problem, threads: number) {
  const executor = await attngraphExecutors[name]!({ threads });
  const model = loadModel(tensorsOf(p), {
    family: "hf-gpt2",
    config: { n_head: p.sizes.heads },
    executors: [executor],
  }) as GptModel;
  return { executor, model };
}

/** The logits of the step's last position, copied out of [1, T, V]. */
function lastLogits(out: Record<string, Tensor>): Float32Array {
  const logits = out["logits"]!.contiguous();
  const [, t, v] = logits.shape as [number, number, number];
  const start = logits.offset + (t - 1) * v;
  return logits.data.slice(start, start + v) as Float32Array;
}

export function attngraphGpt2Impl(name: string): Gpt2Impl {
  return {
    name,
    family: "attngraph",
    ...(name === "wasm" ? {} : { onlyWhenNamed: true }),
    async setup(p, { threads }): Promise<Gpt2Runner> {
      const { executor, model } = await loaded(name, p, threads);
      const release = async (decoder?: Decoder) => {
        await decoder?.dispose();
        await model.dispose();
        (executor as { dispose?: () => void }).dispose?.(); // the wasm executor's memory and workers
      };
      const d = await model
        .decoder({ maxLength: p.sizes.positions, batch: 1, logits: "last" })
        .catch(async (e: unknown) => {
          await release();
          throw e;
        });
      const ids = (from: number, to: number) => Tensor.int32(p.prompt.subarray(from, to), [1, to - from]);
      const token = Tensor.int32([p.token], [1, 1]);
      return {
        ...executorThreads(executor, threads),
        async prefill(t) {
          d.reset();
          return lastLogits(await d.step({ idx: ids(0, t) }));
        },
        async preparePast(past) {
          d.reset();
          await d.step({ idx: ids(0, past) });
        },
        async decode(past) {
          d.truncate(past);
          return lastLogits(await d.step({ idx: token }));
        },
        plannedPeakBytes(c) {
          d.reset();
          return plannedPeakBytes(d, { idx: [1, c.phase === "prefill" ? c.t : 1] });
        },
        dispose: () => release(d),
      };
    },
    async generate(p, { threads }, promptLength, count): Promise<Generation> {
      const start = performance.now();
      const { executor, model } = await loaded(name, p, threads);
      try {
        const tokens: number[] = [];
        const atMs: number[] = [];
        const prompt = [Array.from(p.prompt.subarray(0, promptLength))];
        await new Promise<void>((resolve, reject) =>
          model.generate(prompt, { maxNewTokens: count, greedy: true }).subscribe({
            next: (e: TokenEvent) => {
              atMs.push(performance.now() - start);
              tokens.push(e.token as number);
            },
            error: reject,
            complete: resolve,
          }),
        );
        return { tokens, atMs };
      } finally {
        await model.dispose();
        (executor as { dispose?: () => void }).dispose?.();
      }
    },
  };
}
