// A tiny causal language model for generate()'s tests: token embedding → one pre-norm block (RoPE, so positions
// matter and a crop that restarts them shows) → a linear head to the vocabulary. `decode: true` gives its decode
// graph, which loads the same weights (the caches are the decoder's). And the reference generate() must equal:
// greedy decoding by running the full graph on the whole (cropped) sequence at every step.
import type { Executor, OpGraph } from "@attngraph/graph";
import { GraphBuilder } from "@attngraph/graph";
import { addLinear, addTransformerBlock, defaultInit, loadStateDict } from "@attngraph/nn";
import { compile, compileDecoder, type Decoder } from "@attngraph/runtime";
import { Tensor } from "@attngraph/tensor";

export const V = 13;
const E = 16;

/** idx [B, T] int32 → logits [B, T, V]. */
export function tinyLm(decode = false): OpGraph {
  const b = new GraphBuilder();
  const idx = b.input("idx", ["B", "T"], "int32");
  const x = b.add("embedding", "wte", { ids: idx, weight: b.weight("wte.weight", [V, E]) }); // [B, T, E]
  const block = addTransformerBlock(
    b,
    x,
    { embedDim: E, nHeads: 2, causal: true, position: { kind: "rope" } },
    { prefix: "h.0", decode },
  );
  return b.output(addLinear(b, block.output, "logits", V, { weights: "lm_head", bias: false })).build(); // [B, T, V]
}

/** The full graph's state_dict (seeded), as a checkpoint would hold it. */
export const stateDict = defaultInit(tinyLm(), 7);

/** A decoder of the tiny model on `executor`, loaded from the full graph's state_dict. */
export function tinyDecoder(executor: Executor, maxLength: number, batch = 1): Promise<Decoder> {
  const graph = tinyLm(true);
  return compileDecoder(graph, { executors: [executor], weights: loadStateDict(graph, stateDict), maxLength, batch });
}

/** Greedy tokens by re-running the full graph on the last `blockSize` tokens of each row at every step (nanoGPT). */
export async function fullGreedy(
  executor: Executor,
  prompt: number[][],
  maxNewTokens: number,
  blockSize: number,
): Promise<number[][]> {
  return (await fullGreedyWithLogits(executor, prompt, maxNewTokens, blockSize)).tokens;
}

/** fullGreedy, and each step's last-position logits [V] per row (logits[step][row]). */
export async function fullGreedyWithLogits(
  executor: Executor,
  prompt: number[][],
  maxNewTokens: number,
  blockSize: number,
): Promise<{ tokens: number[][]; logits: Float32Array[][] }> {
  const session = await compile(tinyLm(), { executors: [executor], weights: loadStateDict(tinyLm(), stateDict) });
  const rows = prompt.map((r) => [...r]);
  const steps: Float32Array[][] = [];
  try {
    for (let i = 0; i < maxNewTokens; i++) {
      const context = rows.map((r) => r.slice(-blockSize));
      const T = context[0]!.length;
      const logits = (
        await session.run({ idx: Tensor.int32(context.flat(), [rows.length, T]) })
      ).logits!.toFloat32Array();
      steps.push(
        rows.map((r, b) => {
          const last = logits.slice((b * T + T - 1) * V, (b * T + T) * V);
          r.push(last.indexOf(Math.max(...last)));
          return last;
        }),
      );
    }
  } finally {
    await session.dispose();
  }
  return { tokens: rows, logits: steps };
}
