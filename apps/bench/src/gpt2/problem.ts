// The model of `--problem gpt2`: GPT-2 small's shapes (12 layers, n_embd 768, 12 heads, vocabulary 50257, 1024
// positions, tied embeddings, tanh GELU) with seeded random weights in Hugging Face GPT-2's own layout (keys without
// `transformer.`, the four projections as Conv1D weights [in, out], no lm_head.weight). attngraph loads that state_dict
// with loadModel as a user loads a GPT-2 file; the ONNX model onnxruntime runs is written from the same tensors (its
// MatMuls take [in, out] as they are). Smaller sizes serve the tests.
import { mulberry32 } from "../problem.js";

export interface Gpt2Sizes {
  readonly vocab: number;
  readonly positions: number;
  readonly layers: number;
  readonly heads: number;
  readonly embd: number;
}

/** GPT-2 small (124M parameters). */
export const GPT2_SMALL: Gpt2Sizes = Object.freeze({ vocab: 50257, positions: 1024, layers: 12, heads: 12, embd: 768 });

export interface Gpt2Problem {
  readonly sizes: Gpt2Sizes;
  /** The state_dict in Hugging Face GPT-2's layout: name → [shape, values]. */
  readonly stateDict: ReadonlyMap<string, { readonly shape: readonly number[]; readonly data: Float32Array }>;
  /** The prompt's token ids, as many as the model has positions. */
  readonly prompt: Int32Array;
  /** The token a decode row feeds after its prompt. */
  readonly token: number;
  readonly eps: number;
}

/** Every weight's name and shape in Hugging Face GPT-2's layout, in the file's order. */
export function gpt2Shapes(s: Gpt2Sizes): [string, number[]][] {
  const E = s.embd;
  const out: [string, number[]][] = [
    ["wte.weight", [s.vocab, E]],
    ["wpe.weight", [s.positions, E]],
  ];
  for (let i = 0; i < s.layers; i++) {
    const p = `h.${i}`;
    out.push(
      [`${p}.ln_1.weight`, [E]],
      [`${p}.ln_1.bias`, [E]],
      [`${p}.attn.c_attn.weight`, [E, 3 * E]],
      [`${p}.attn.c_attn.bias`, [3 * E]],
      [`${p}.attn.c_proj.weight`, [E, E]],
      [`${p}.attn.c_proj.bias`, [E]],
      [`${p}.ln_2.weight`, [E]],
      [`${p}.ln_2.bias`, [E]],
      [`${p}.mlp.c_fc.weight`, [E, 4 * E]],
      [`${p}.mlp.c_fc.bias`, [4 * E]],
      [`${p}.mlp.c_proj.weight`, [4 * E, E]],
      [`${p}.mlp.c_proj.bias`, [E]],
    );
  }
  out.push(["ln_f.weight", [E]], ["ln_f.bias", [E]]);
  return out;
}

/** Parameters of the model (weights only; the tied head counted once). */
export function gpt2Parameters(s: Gpt2Sizes): number {
  return gpt2Shapes(s).reduce((a, [, shape]) => a + shape.reduce((x, y) => x * y, 1), 0);
}

/**
 * The problem at `sizes`, drawn from `seed` (mulberry32): GPT-2's initialisation scale (std 0.02 for the matrices and
 * embeddings, uniform), small random biases and LayerNorm affines near (1, 0), so that a dropped bias or affine shows.
 */
export function makeGpt2Problem(sizes: Gpt2Sizes = GPT2_SMALL, seed = 42): Gpt2Problem {
  const rand = mulberry32(seed);
  const uniform = (n: number, center: number, std: number) => {
    const half = std * Math.sqrt(3); // a uniform [−a, a] has std a/√3
    const out = new Float32Array(n);
    for (let i = 0; i < n; i++) out[i] = center + (rand() * 2 - 1) * half;
    return out;
  };
  const stateDict = new Map<string, { shape: number[]; data: Float32Array }>();
  for (const [name, shape] of gpt2Shapes(sizes)) {
    const n = shape.reduce((a, b) => a * b, 1);
    const affine = /ln_.\.weight$|ln_f\.weight$/.test(name);
    const data = affine ? uniform(n, 1, 0.05) : name.endsWith(".bias") ? uniform(n, 0, 0.01) : uniform(n, 0, 0.02);
    stateDict.set(name, { shape, data });
  }
  const prompt = Int32Array.from({ length: sizes.positions }, () => Math.floor(rand() * sizes.vocab));
  return { sizes, stateDict, prompt, token: Math.floor(rand() * sizes.vocab), eps: 1e-5 };
}
