// generate() on the cpu executor: greedy decoding through the KV cache equals re-running the full graph on the whole
// sequence (also past blockSize, where nanoGPT crops), seeds repeat, stop tokens end rows, cancellation through the
// signal and by unsubscribing, and every bad input is a GenerateError raised before anything runs.
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { thrownError } from "@attngraph/testkit/test-helpers";
import { firstValueFrom, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { generate, generateTokens, type TokenEvent } from "./generate.js";
import { GenerateAbortError, GenerateError } from "./generate-error.js";
import { fullGreedy, fullGreedyWithLogits, tinyDecoder, V } from "./test-lm.js";
import { gpt2Tokenizer } from "./tokenizer.js";

const prompt = [[3, 1, 4]];

function maxDiff(a: Float32Array, b: Float32Array): number {
  return a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i]!)), 0);
}

describe("generate on cpu", () => {
  it("greedy through the decoder equals greedy by re-running the full graph, within and past blockSize (nanoGPT's crop)", async () => {
    const cpu = createCpuExecutor();
    const dec = await tinyDecoder(cpu, 6);
    const want = await fullGreedyWithLogits(cpu, prompt, 10, 6);
    expect(await generateTokens(dec, prompt, { maxNewTokens: 10, greedy: true })).toEqual(want.tokens);
    expect(await generateTokens(dec, prompt[0]!, { maxNewTokens: 10, temperature: 0 })).toEqual(want.tokens);
    expect(
      await generateTokens(dec, Tensor.int32([3, 1, 4], [1, 3]), { maxNewTokens: 3, greedy: true, blockSize: 4 }),
    ).toEqual(await fullGreedy(cpu, prompt, 3, 4));
    // Logits too, step by step: past the crop the context restarts at position 0 (RoPE sees it), as in nanoGPT.
    const events = await firstValueFrom(
      generate(dec, prompt, { maxNewTokens: 10, greedy: true, logits: true }).pipe(toArray()),
    );
    events.forEach((e, i) => expect(maxDiff(e.logits as Float32Array, want.logits[i]![0]!)).toBeLessThan(1e-4));
    const uncropped = await fullGreedyWithLogits(cpu, prompt, 10, 13);
    expect(maxDiff(uncropped.logits[9]![0]!, want.logits[9]![0]!)).toBeGreaterThan(1e-3);
    await dec.dispose();
  });

  it("a batch of 2 rows: one event per position with a token per row, each row as the full graph's", async () => {
    const cpu = createCpuExecutor();
    const dec = await tinyDecoder(cpu, 8, 2);
    const rows = [
      [3, 1, 4],
      [9, 2, 6],
    ];
    const events = await firstValueFrom(
      generate(dec, rows, { maxNewTokens: 4, greedy: true, logits: true }).pipe(toArray()),
    );
    expect(events.map((e) => e.index)).toEqual([0, 1, 2, 3]);
    const want = await fullGreedy(cpu, rows, 4, 8);
    expect(events.map((e) => e.token)).toEqual([0, 1, 2, 3].map((i) => [want[0]![3 + i], want[1]![3 + i]]));
    const logits = events[0]!.logits as Float32Array[];
    expect(logits.map((l) => l.length)).toEqual([V, V]);
    expect(logits[0]!.indexOf(Math.max(...logits[0]!))).toBe(want[0]![3]);
    await dec.dispose();
  });

  it("the same seed gives the same sampled tokens; another seed other tokens; top-k 1 is greedy", async () => {
    const dec = await tinyDecoder(createCpuExecutor(), 32);
    const sampled = (seed: number) =>
      generateTokens(dec, prompt, { maxNewTokens: 20, temperature: 1.5, topP: 0.95, seed });
    const a = await sampled(1);
    expect(await sampled(1)).toEqual(a);
    expect(await sampled(2)).not.toEqual(a);
    expect(await generateTokens(dec, prompt, { maxNewTokens: 8, topK: 1, seed: 5 })).toEqual(
      await generateTokens(dec, prompt, { maxNewTokens: 8, greedy: true }),
    );
    await dec.dispose();
  });

  it("a stop token ends the row with it; with a batch, a finished row repeats it until every row is done", async () => {
    const cpu = createCpuExecutor();
    const dec = await tinyDecoder(cpu, 16);
    const greedy = (await fullGreedy(cpu, prompt, 6, 16))[0]!;
    const stop = greedy[5]!; // the third new token
    const stopAt = greedy.indexOf(stop, 3);
    expect(await generateTokens(dec, prompt, { maxNewTokens: 6, greedy: true, stopTokens: [stop] })).toEqual([
      greedy.slice(0, stopAt + 1),
    ]);
    const events = await firstValueFrom(
      generate(dec, prompt, { maxNewTokens: 6, greedy: true, stopTokens: [stop] }).pipe(toArray()),
    );
    expect(events.at(-1)!.token).toBe(stop);
    await dec.dispose();
  });

  it("aborting the signal errors with a GenerateAbortError; unsubscribing stops silently; the decoder goes on", async () => {
    const dec = await tinyDecoder(createCpuExecutor(), 64);
    const controller = new AbortController();
    const seen: TokenEvent[] = [];
    const error = await new Promise<unknown>((resolve) => {
      generate(dec, prompt, { maxNewTokens: 50, greedy: true, signal: controller.signal }).subscribe({
        next: (e) => {
          seen.push(e);
          if (e.index === 2) controller.abort();
        },
        error: resolve,
        complete: () => resolve("completed"),
      });
    });
    expect(error).toBeInstanceOf(GenerateAbortError);
    expect((error as GenerateAbortError).name).toBe("AbortError");
    expect(seen.length).toBe(3);

    const aborted = new AbortController();
    aborted.abort();
    await expect(generateTokens(dec, prompt, { maxNewTokens: 3, signal: aborted.signal })).rejects.toBeInstanceOf(
      GenerateAbortError,
    );

    let count = 0;
    let settled = false;
    const sub = generate(dec, prompt, { maxNewTokens: 50, greedy: true }).subscribe({
      next: () => {
        if (++count === 2) sub.unsubscribe();
      },
      error: () => (settled = true),
      complete: () => (settled = true),
    });
    // The next generation on the decoder waits for the cancelled one to stop, then runs in full.
    const after = await generateTokens(dec, prompt, { maxNewTokens: 4, greedy: true });
    expect(count).toBe(2);
    expect(settled).toBe(false);
    expect(after[0]!.length).toBe(7);
    await dec.dispose();
  });

  it("with a tokenizer: a text prompt, and each event's text is what its token adds", async () => {
    const tok = gpt2Tokenizer();
    const dec = await tinyDecoder(createCpuExecutor(), 16);
    // The tiny model's vocabulary is 13 tokens: GPT-2 ids 0..12 are the characters ! to -, and "!%(" is [0, 4, 7].
    const events = await firstValueFrom(
      generate(dec, "!%(", { maxNewTokens: 4, greedy: true, tokenizer: tok }).pipe(toArray()),
    );
    const tokens = events.map((e) => e.token as number);
    expect(tokens).toEqual((await generateTokens(dec, [0, 4, 7], { maxNewTokens: 4, greedy: true }))[0]!.slice(3));
    expect(events.map((e) => e.text)).toEqual(tokens.map((t) => tok.decode([t])));
    await dec.dispose();
  });

  const bad: [string, () => unknown, RegExp][] = [
    [
      "a float tensor of ids",
      () => generate(dec1, new Tensor(new Float32Array([1, 2]), [1, 2]) as never, { maxNewTokens: 1 }),
      /prompt: token ids must be an int32 tensor .*got a float32 tensor \[1, 2\]/,
    ],
    [
      "an id outside [0, V)",
      () => generate(dec1, [1, V], { maxNewTokens: 1 }),
      /prompt\[0\]\[1\]: not a token id of the graph \(expected an integer in \[0, 13\), got 13\)/,
    ],
    ["a negative id", () => generate(dec1, [-1], { maxNewTokens: 1 }), /got -1/],
    [
      "a prompt longer than the cache",
      () => generate(dec1, [1, 2, 3, 4, 5, 6, 7, 8, 9], { maxNewTokens: 1 }),
      /prompt: longer than the context .*expected <= 8 ids, got 9/,
    ],
    [
      "a prompt longer than blockSize",
      () => generate(dec1, [1, 2, 3], { maxNewTokens: 1, blockSize: 2 }),
      /expected <= 2 ids, got 3/,
    ],
    [
      "blockSize past maxLength",
      () => generate(dec1, [1], { maxNewTokens: 1, blockSize: 9 }),
      /options\.blockSize.*\[1, 8\].*got 9/,
    ],
    ["topP 0", () => generate(dec1, [1], { maxNewTokens: 1, topP: 0 }), /options\.topP: must be in \(0, 1\].*got 0/],
    ["topP 1.5", () => generate(dec1, [1], { maxNewTokens: 1, topP: 1.5 }), /got 1\.5/],
    [
      "topK 0",
      () => generate(dec1, [1], { maxNewTokens: 1, topK: 0 }),
      /options\.topK: must be an integer >= 1.*got 0/,
    ],
    ["temperature -1", () => generate(dec1, [1], { maxNewTokens: 1, temperature: -1 }), /options\.temperature.*got -1/],
    [
      "maxNewTokens 1.5",
      () => generate(dec1, [1], { maxNewTokens: 1.5 }),
      /options\.maxNewTokens: must be a non-negative integer.*got 1\.5/,
    ],
    ["maxNewTokens -1", () => generate(dec1, [1], { maxNewTokens: -1 }), /got -1/],
    [
      "an unknown option",
      () => generate(dec1, [1], { maxNewTokens: 1, top_k: 3 } as never),
      /options\.top_k: unknown option/,
    ],
    [
      "two rows for a batch-1 decoder",
      () => generate(dec1, [[1], [2]], { maxNewTokens: 1 }),
      /prompt: the batch differs .*expected 1 row .*got 2/,
    ],
    [
      "rows of two lengths",
      () => generate(dec2, [[1], [2, 3]], { maxNewTokens: 1 }),
      /prompt\[1\]: every row must have the same length/,
    ],
    ["an empty prompt", () => generate(dec1, [], { maxNewTokens: 1 }), /at least one token/],
    ["text without a tokenizer", () => generate(dec1, "hi", { maxNewTokens: 1 }), /a text prompt needs a tokenizer/],
    [
      "an input that is not there",
      () => generate(dec1, [1], { maxNewTokens: 1, input: "ids" }),
      /graph input ids: no such input .*got none/,
    ],
    [
      "logits named wrong",
      () => generate(dec1, [1], { maxNewTokens: 1, output: "h.0.output" }),
      /graph output h\.0\.output: no such output/,
    ],
  ];
  let dec1: Awaited<ReturnType<typeof tinyDecoder>>;
  let dec2: Awaited<ReturnType<typeof tinyDecoder>>;
  it.each(bad)("%s is a GenerateError naming it, thrown before anything runs", async (_, f, message) => {
    const cpu = createCpuExecutor();
    dec1 ??= await tinyDecoder(cpu, 8);
    dec2 ??= await tinyDecoder(cpu, 8, 2);
    const error = thrownError(() => f());
    expect(error).toBeInstanceOf(GenerateError);
    expect(AttnGraphError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(message);
    expect(dec1.length).toBe(0);
  });
});
