// Proves the float64 reference: it must reproduce every expected tensor of every golden case within the case's own
// tolerance. The second block proves the comparison has teeth: a reference with one feature switched off must fail.
import { describe, expect, it } from "vitest";
import { compare, formatShape } from "@attngraph/tensor";
import type { AttentionConfig } from "@attngraph/attention";
import { goldenDir, listCases, loadCase } from "../golden/load.js";
import type { GoldenCase } from "../golden/case.js";
import { referenceAttention, type ReferenceName } from "./attention64.js";

/** Names of expected tensors that the reference misses, with the worst element of each. */
function mismatches(c: GoldenCase, config: AttentionConfig = c.config): string[] {
  const ref = referenceAttention(config, c.weights, c.inputs);
  const bad: string[] = [];
  for (const [name, want] of Object.entries(c.expected)) {
    const got = ref[name as ReferenceName];
    if (formatShape(got.shape) !== formatShape(want.shape)) {
      bad.push(`${name}: shape ${formatShape(got.shape)} vs ${formatShape(want.shape)}`);
      continue;
    }
    const r = compare(got.data, want, c.tolerance);
    if (!r.ok)
      bad.push(
        `${name}: ${r.failures} of ${want.size} off, worst at ${r.worst?.index}: ${r.worst?.got} vs ${r.worst?.expected}`,
      );
  }
  return bad;
}

const files = listCases(goldenDir);

describe("referenceAttention on the golden cases", () => {
  it("finds the golden cases", () => {
    expect(files.length).toBeGreaterThanOrEqual(21);
  });

  it.each(files.map((f) => [f.slice(goldenDir.length + 1), f]))("%s", (_name, file) => {
    const c = loadCase(file);
    expect(Object.keys(c.expected).length).toBeGreaterThan(0);
    expect(mismatches(c)).toEqual([]);
  });
});

describe("the golden comparison catches a wrong reference", () => {
  const load = (name: string): GoldenCase => loadCase(`${goldenDir}/${name}`);
  const wrong: [string, string, (c: AttentionConfig) => AttentionConfig][] = [
    ["causal off", "mha-causal-outproj-b2-t6-d8-h2.json", (c) => ({ ...c, causal: false })],
    ["window off", "window3-causal-b2-t10-d8-h2.json", (c) => ({ ...c, window: null })],
    // Its scale 0.3 differs from the default 1/sqrt(D) = 0.5, so dropping it (null) must be caught.
    ["default scale instead of 0.3", "scale0.3-b2-t5-d8-h2.json", (c) => ({ ...c, scale: null })],
    ["no output bias", "batch3-b3-t7-d8-h2.json", (c) => ({ ...c, outBias: false })],
    ["no output projection", "heads4-causal-b2-t8-d16.json", (c) => ({ ...c, outProj: false, outBias: false })],
  ];
  it.each(wrong)("%s", (_what, file, mutate) => {
    expect(mismatches(load(file), mutate(load(file).config)).length).toBeGreaterThan(0);
  });

  it("ignoring the key padding mask", () => {
    const c = load("key-padding-b3-t6-d8-h2.json");
    const { keyPaddingMask: _ignored, ...rest } = c.inputs;
    expect(mismatches({ ...c, inputs: rest }).length).toBeGreaterThan(0);
  });

  it("query heads reading the wrong kv head", () => {
    // Swapping the rows of the two kv heads in W_key/W_value makes every query head read the other group's keys.
    const c = load("gqa-h4-kv2-causal-b2-t8-d16.json");
    const swap = (w: typeof c.weights.W_key) => {
      const a = w!.toArray();
      const half = a.length / 2;
      return { shape: w!.shape, data: [...a.slice(half), ...a.slice(0, half)] };
    };
    const ref = referenceAttention(
      c.config,
      { ...c.weights, W_key: swap(c.weights.W_key), W_value: swap(c.weights.W_value) },
      c.inputs,
    );
    expect(compare(ref.output.data, c.expected.output!, c.tolerance).ok).toBe(false);
  });
});
