// The sampling math against hand-computed values: argmax's first maximum, top-k as nanoGPT (ties with the k-th kept),
// top-p as Hugging Face's TopPLogitsWarper, temperature, the draw, and the seeded generator.
import { describe, expect, it } from "vitest";
import { GenerateError } from "./generate-error.js";
import { splitmix32 } from "./prng.js";
import { argmax, drawFrom, sampleToken, samplingProbs } from "./sampling.js";

const softmax = (xs: number[]) => {
  const m = Math.max(...xs);
  const e = xs.map((x) => Math.exp(x - m));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / s);
};
const close = (got: Float64Array, want: number[]) => want.forEach((w, i) => expect(got[i]).toBeCloseTo(w, 12));
const plain = { temperature: 1, greedy: false };

describe("argmax", () => {
  it("the first maximum on ties (torch.argmax), −∞ never wins", () => {
    expect(argmax([1, 3, 3, 2])).toBe(1);
    expect(argmax([-Infinity, -5, -Infinity])).toBe(1);
    expect(argmax(new Float32Array([0.5]))).toBe(0);
  });
  it("a NaN logit is a GenerateError naming the token", () => {
    expect(() => argmax([0, NaN, 1], "logits[0, 2]")).toThrow(/logits\[0, 2\]: NaN logit at token 1/);
  });
});

describe("samplingProbs", () => {
  const logits = [2, 1, 0, -1];

  it("is softmax(logits / temperature)", () => {
    close(samplingProbs(logits, plain), softmax(logits));
    close(samplingProbs(logits, { ...plain, temperature: 0.5 }), softmax(logits.map((x) => x / 0.5)));
  });

  it("top-k keeps the k largest, and every logit tied with the k-th (nanoGPT's logits < v[:, [-1]])", () => {
    close(samplingProbs(logits, { ...plain, topK: 2 }), [...softmax([2, 1]), 0, 0]);
    close(samplingProbs([1, 3, 1, 0], { ...plain, topK: 2 }), [...softmax([1, 3, 1]), 0]);
    close(samplingProbs(logits, { ...plain, topK: 10 }), softmax(logits));
  });

  it("top-p keeps the smallest set whose probability reaches p, at least the most probable token", () => {
    const p = softmax(logits); // ≈ [0.644, 0.237, 0.087, 0.032]
    close(samplingProbs(logits, { ...plain, topP: 0.5 }), [1, 0, 0, 0]);
    close(samplingProbs(logits, { ...plain, topP: p[0]! }), [1, 0, 0, 0]); // reached exactly: no more
    const two = p[0]! + p[1]!;
    close(samplingProbs(logits, { ...plain, topP: 0.7 }), [p[0]! / two, p[1]! / two, 0, 0]);
    close(samplingProbs(logits, { ...plain, topP: 1e-9 }), [1, 0, 0, 0]);
    close(samplingProbs(logits, { ...plain, topP: 1 }), p);
  });

  it("top-k, then top-p on what top-k kept (Hugging Face's order)", () => {
    const kept = softmax([2, 1, 0]);
    close(samplingProbs(logits, { ...plain, topK: 3, topP: 0.8 }), [
      kept[0]! / (kept[0]! + kept[1]!),
      kept[1]! / (kept[0]! + kept[1]!),
      0,
      0,
    ]);
  });

  it("−∞ logits get 0; all −∞, NaN or +∞ is a GenerateError", () => {
    close(samplingProbs([0, -Infinity, 0], plain), [0.5, 0, 0.5]);
    expect(() => samplingProbs([-Infinity, -Infinity], plain)).toThrow(GenerateError);
    expect(() => samplingProbs([0, NaN], plain)).toThrow(/a logit of NaN at token 1/);
    expect(() => samplingProbs([Infinity, 0], plain)).toThrow(/a logit of Infinity at token 0/);
  });
});

describe("drawFrom and sampleToken", () => {
  it("picks the first index whose cumulative probability exceeds u, skipping zeros", () => {
    const probs = [0.2, 0, 0.5, 0.3];
    expect([0, 0.19, 0.2, 0.69, 0.7, 0.999].map((u) => drawFrom(probs, u))).toEqual([0, 0, 2, 2, 3, 3]);
    expect(drawFrom([0.5, 0.4999999, 0], 0.99999999)).toBe(1); // the sum rounds under 1
  });

  it("draws in proportion to the probabilities", () => {
    const random = splitmix32(42);
    const counts = [0, 0, 0];
    for (let i = 0; i < 30000; i++) counts[sampleToken([Math.log(1), Math.log(2), Math.log(7)], plain, random)]!++;
    counts.forEach((c, i) => expect(c / 30000).toBeCloseTo([0.1, 0.2, 0.7][i]!, 1));
  });

  it("greedy ignores the generator", () => {
    let calls = 0;
    expect(sampleToken([1, 5, 2], { ...plain, greedy: true }, () => (calls++, 0.5))).toBe(1);
    expect(calls).toBe(0);
  });
});

describe("splitmix32", () => {
  it("repeats for a seed, differs between seeds, stays in [0, 1)", () => {
    const a = Array.from({ length: 1000 }, splitmix32(7));
    expect(Array.from({ length: 1000 }, splitmix32(7))).toEqual(a);
    expect(Array.from({ length: 5 }, splitmix32(8))).not.toEqual(a.slice(0, 5));
    expect(a.every((u) => u >= 0 && u < 1)).toBe(true);
    expect(a.reduce((s, u) => s + u, 0) / a.length).toBeCloseTo(0.5, 1);
    expect(splitmix32(2 ** 32 + 7)()).toBe(splitmix32(7)());
  });
});
