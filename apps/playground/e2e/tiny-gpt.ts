// A tiny nanoGPT state_dict made in the test, under nanoGPT's names (lm_head tied, so not saved): small enough to write
// in a blink, with GPT-2's vocabulary so that the Model tab takes text prompts through GPT-2's tokenizer. Its values
// come from a seeded generator: the same bytes every run.
import { writeSafetensors } from "@attngraph/nn";
import { Tensor } from "@attngraph/tensor";

/** `omit`: keys left out of the file (a broken checkpoint, for the loader's error). */
export function tinyGptSafetensors(o: {
  vocab: number;
  block: number;
  embd: number;
  layers: number;
  seed: number;
  omit?: readonly string[];
}): Uint8Array {
  let s = o.seed >>> 0;
  const uniform = (scale: number) => {
    // mulberry32: small, seedable, good enough for weights nobody trains.
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1) * scale;
  };
  const E = o.embd;
  const tensors = new Map<string, Tensor>();
  const put = (name: string, shape: number[], fill: () => number) =>
    tensors.set(name, Tensor.from(Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, fill), shape));
  const random = (name: string, shape: number[]) => put(name, shape, () => uniform(0.5));
  put("transformer.wte.weight", [o.vocab, E], () => uniform(1));
  random("transformer.wpe.weight", [o.block, E]);
  for (let i = 0; i < o.layers; i++) {
    const p = `transformer.h.${i}`;
    put(`${p}.ln_1.weight`, [E], () => 1);
    put(`${p}.ln_1.bias`, [E], () => 0);
    random(`${p}.attn.c_attn.weight`, [3 * E, E]);
    random(`${p}.attn.c_attn.bias`, [3 * E]);
    random(`${p}.attn.c_proj.weight`, [E, E]);
    random(`${p}.attn.c_proj.bias`, [E]);
    put(`${p}.ln_2.weight`, [E], () => 1);
    put(`${p}.ln_2.bias`, [E], () => 0);
    random(`${p}.mlp.c_fc.weight`, [4 * E, E]);
    random(`${p}.mlp.c_fc.bias`, [4 * E]);
    random(`${p}.mlp.c_proj.weight`, [E, 4 * E]);
    random(`${p}.mlp.c_proj.bias`, [E]);
  }
  put("transformer.ln_f.weight", [E], () => 1);
  put("transformer.ln_f.bias", [E], () => 0);
  for (const key of o.omit ?? []) tensors.delete(key);
  return writeSafetensors(tensors);
}
