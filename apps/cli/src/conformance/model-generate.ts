// Greedy generation of a golden-models case: nanoGPT's generate(prompt, max_new_tokens, top_k=1) on the model's
// KV-cache decoder, token for token against PyTorch's. A token that differs where PyTorch's top two logits were within
// 1e-5 of each other is a tie (FORMAT.md): the line says so, and the tokens after it are not compared (they follow
// another prefix).
import { generate, type GptModel } from "@attngraph/models";
import { lastValueFrom, toArray } from "rxjs";
import type { Tensor } from "@attngraph/tensor";
import type { TensorCheck } from "./run-case.js";

const TIE = 1e-5;

export async function greedyCheck(
  model: GptModel,
  g: { readonly prompt: Tensor<"int32">; readonly maxNewTokens: number; readonly greedy: Tensor<"int32"> },
  notes: string[],
): Promise<TensorCheck> {
  const name = "greedy tokens";
  const expected = Array.from(g.greedy.toInt32Array());
  const gaps: number[] = [];
  const decoder = await model.decoder({ batch: g.prompt.shape[0]! });
  let got: number[];
  try {
    const events = await lastValueFrom(
      generate(decoder, g.prompt, { maxNewTokens: g.maxNewTokens, greedy: true, logits: true }).pipe(toArray()),
      { defaultValue: [] },
    );
    const B = g.prompt.shape[0]!;
    const P = g.prompt.shape[1]!;
    const prompt = g.prompt.toInt32Array();
    got = [];
    for (let b = 0; b < B; b++) {
      got.push(...prompt.subarray(b * P, (b + 1) * P));
      for (const e of events) {
        got.push(typeof e.token === "number" ? e.token : e.token[b]!);
        gaps.push(topTwoGap((Array.isArray(e.logits) ? e.logits[b] : e.logits)!));
      }
    }
  } finally {
    await decoder.dispose();
  }
  if (got.length !== expected.length)
    return {
      name,
      ok: false,
      failures: 1,
      size: expected.length,
      worst: undefined,
      problem: `${got.length} tokens vs ${expected.length}`,
    };
  const P = g.prompt.shape[1]!;
  const width = expected.length / g.prompt.shape[0]!;
  for (let i = 0; i < got.length; i++) {
    if (got[i] === expected[i]) continue;
    const step = (i % width) - P; // gaps hold, per row, one entry per new token
    const gap = step >= 0 ? gaps[Math.floor(i / width) * (width - P) + step] : undefined;
    if (gap !== undefined && gap <= TIE) {
      notes.push(
        `greedy token ${i} is a tie (top two logits ${gap.toExponential(1)} apart): got ${got[i]}, PyTorch ${expected[i]}; later tokens not compared`,
      );
      return { name, ok: true, failures: 0, size: expected.length, worst: undefined };
    }
    return {
      name,
      ok: false,
      failures: got.filter((t, k) => t !== expected[k]).length,
      size: expected.length,
      worst: { index: i, got: got[i]!, expected: expected[i]!, error: Math.abs(got[i]! - expected[i]!) },
    };
  }
  return {
    name,
    ok: true,
    failures: 0,
    size: expected.length,
    worst: { index: 0, got: got[0]!, expected: expected[0]!, error: 0 },
  };
}

/** The distance between the largest and second largest of one row of logits. */
function topTwoGap(logits: Float32Array): number {
  let a = -Infinity;
  let b = -Infinity;
  for (const v of logits) {
    if (v > a) [a, b] = [v, a];
    else if (v > b) b = v;
  }
  return a - b;
}
