// attngraph's decode rows (--problem decode), run the way a user decodes: multiHeadAttention(config, { decode: true })
// → compileDecoder with room for the prompt and one token → decoder.step. The prompt fills the cache once, outside the
// timed region; each timed run rewinds the cache to the prompt (truncate: O(1), it only resets the length) and steps
// the one new token, so every run sees exactly T cached positions and binds the same shapes (P = T) as the one before.
import { multiHeadAttention } from "@attngraph/attention";
import type { Executor } from "@attngraph/graph";
import { compileDecoder, type Decoder } from "@attngraph/runtime";
import { Tensor } from "@attngraph/tensor";
import type { DecodeProblem } from "../problem.js";
import {
  benchAttentionWeights,
  benchConfig,
  plannedPeakBytes,
  sessionStreams,
  type AttngraphRunner,
} from "./attngraph.js";

/** A decode runner, with its decoder (for the tests and for profiling through decoder.session). */
export interface DecodeRunner extends AttngraphRunner {
  readonly decoder: Decoder;
}

/** A decode runner on one executor: the cache filled with p.prompt, each run one step of p.token, output [b, 1, d]. */
export async function decodeRunner(executor: Executor, p: DecodeProblem, threads: number): Promise<DecodeRunner> {
  const { b, t, d } = p.shape;
  const graph = multiHeadAttention(benchConfig(p), { decode: true });
  const decoder = await compileDecoder(graph, {
    executors: [executor],
    weights: benchAttentionWeights(p),
    maxLength: t + 1,
    batch: b,
  });
  await decoder.step({ x: new Tensor(p.prompt, [b, t, d]) });
  const token = new Tensor(p.token, [b, 1, d]);
  const outName = graph.outputs[0]!;
  let seen = 0;
  return {
    threads,
    decoder,
    async run() {
      decoder.truncate(t);
      const out = (await decoder.step({ x: token }))[outName]!.contiguous();
      return out.data.subarray(out.offset, out.offset + out.size);
    },
    streams: sessionStreams(decoder.session, (n) => void (seen += n)),
    // The plan of a timed step: the cache holds T positions after the prefill, as after every truncate(t).
    plannedPeakBytes: plannedPeakBytes(decoder, { x: [b, 1, d] }),
    observed: () => seen,
    dispose: () => decoder.dispose(),
  };
}
