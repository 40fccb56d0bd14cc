// The numbers a run starts from: a loaded golden case's weights and inputs when they fit the config, else seeded
// random ones (nn.Linear's uniform(−1/√in, 1/√in) for weights, standard normal for inputs), the same on every reload.
import { attentionWeights, headDim, type AttentionConfig, type RawWeight } from "@attngraph/attention";
import { Tensor } from "@attngraph/tensor";
import type { GoldenCase } from "@attngraph/testkit/case";
import { mulberry32 } from "@attngraph/testkit/prng";
import type { PlaygroundConfig } from "./playground-config.js";

export interface RunInputs {
  readonly weights: Record<string, Tensor>;
  readonly inputs: Record<string, Tensor>;
  /** In words, for the page: "golden case seed-002-…" or "random, seed 1 (…)". */
  readonly source: string;
  /** The case used, when one was. */
  readonly golden: GoldenCase | undefined;
}

/** Why a loaded case cannot serve this config (its weights or inputs have other shapes), or undefined when it can. */
export function caseMismatch(g: GoldenCase, c: AttentionConfig, p: PlaygroundConfig): string | undefined {
  for (const k of ["dIn", "dOut", "numHeads", "numKvHeads", "qkvBias", "outProj", "outBias", "cross"] as const) {
    if (g.config[k] !== c[k]) return `${k} is ${String(c[k])}, the case has ${String(g.config[k])}`;
  }
  const x = g.inputs.x!.shape;
  if (x[0] !== p.batch || x[1] !== p.length)
    return `sizes B=${p.batch}, L=${p.length}; the case has B=${x[0]}, L=${x[1]}`;
  const kv = g.inputs.kv?.shape;
  if (kv && kv[1] !== p.kvLength) return `S=${p.kvLength}; the case has S=${kv[1]}`;
  return undefined;
}

export function runInputs(c: AttentionConfig, p: PlaygroundConfig, loaded: GoldenCase | undefined): RunInputs {
  const mismatch = loaded ? caseMismatch(loaded, c, p) : undefined;
  if (loaded && mismatch === undefined) {
    return {
      weights: attentionWeights(c, loaded.weights, { fusedQkv: p.fusedQkv }),
      inputs: { ...loaded.inputs },
      source: `golden case ${loaded.name}`,
      golden: loaded,
    };
  }
  const next = mulberry32(p.seed);
  const uniform = (shape: number[], bound: number) =>
    Tensor.from(
      Array.from({ length: shape.reduce((a, d) => a * d, 1) }, () => (next() * 2 - 1) * bound),
      shape,
    );
  const normal = (shape: number[]) =>
    Tensor.from(
      Array.from(
        { length: shape.reduce((a, d) => a * d, 1) },
        () => Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next()),
      ),
      shape,
    );
  const ekv = c.numKvHeads * headDim(c);
  const raw: Record<string, RawWeight> = {
    W_query: uniform([c.dOut, c.dIn], 1 / Math.sqrt(c.dIn)),
    W_key: uniform([ekv, c.dIn], 1 / Math.sqrt(c.dIn)),
    W_value: uniform([ekv, c.dIn], 1 / Math.sqrt(c.dIn)),
  };
  if (c.qkvBias) {
    raw.b_query = uniform([c.dOut], 1 / Math.sqrt(c.dIn));
    raw.b_key = uniform([ekv], 1 / Math.sqrt(c.dIn));
    raw.b_value = uniform([ekv], 1 / Math.sqrt(c.dIn));
  }
  if (c.outProj) raw.out_proj = uniform([c.dOut, c.dOut], 1 / Math.sqrt(c.dOut));
  if (c.outBias) raw.out_bias = uniform([c.dOut], 1 / Math.sqrt(c.dOut));
  const inputs: Record<string, Tensor> = { x: normal([p.batch, p.length, c.dIn]) };
  if (c.cross) inputs.kv = normal([p.batch, p.kvLength, c.dIn]);
  const why = loaded ? `; the loaded case does not fit: ${mismatch}` : "";
  return {
    weights: attentionWeights(c, raw, { fusedQkv: p.fusedQkv }),
    inputs,
    source: `random, seed ${p.seed}${why}`,
    golden: undefined,
  };
}
