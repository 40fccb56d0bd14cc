// The MultiheadAttention fixtures (fixtures/make_mha.py) as tests read them: PyTorch's constructor arguments, the
// forward inputs (bool masks as int32, PyTorch's bool convention here; "-inf" back to −∞) and PyTorch's outputs.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Tensor, type AnyTensor } from "@attngraph/tensor";

const DIR = fileURLToPath(new URL("../fixtures/mha/", import.meta.url));

interface TensorDoc {
  readonly dtype: "bool" | "float32";
  readonly shape: number[];
  readonly data: (number | boolean | string)[];
}

export interface MhaCase {
  readonly config: Record<string, unknown>;
  readonly selfAttention: boolean;
  readonly inputs: Record<string, AnyTensor>;
  readonly expected: { attn_output: Tensor; attn_output_weights: Tensor; attn_output_weights_per_head: Tensor };
  /** The state_dict as a .safetensors file. */
  readonly bytes: Uint8Array;
}

function tensorOf(d: TensorDoc): AnyTensor {
  if (d.dtype === "bool")
    return Tensor.int32(
      d.data.map((v) => (v ? 1 : 0)),
      d.shape,
    );
  return Tensor.from(
    d.data.map((v) => (v === "-inf" ? -Infinity : (v as number))),
    d.shape,
  );
}

export function mhaCase(name: string): MhaCase {
  const doc = JSON.parse(readFileSync(`${DIR}${name}.json`, "utf8")) as {
    config: Record<string, unknown>;
    self_attention: boolean;
    inputs: Record<string, TensorDoc>;
    expected: Record<string, TensorDoc>;
  };
  const map = (o: Record<string, TensorDoc>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, tensorOf(v)]));
  return {
    config: doc.config,
    selfAttention: doc.self_attention,
    inputs: map(doc.inputs),
    expected: map(doc.expected) as MhaCase["expected"],
    bytes: new Uint8Array(readFileSync(`${DIR}${name}.safetensors`)),
  };
}

/** The case's forward inputs as MultiheadAttention takes them (self-attention: the one query tensor three times). */
export function mhaForward(c: MhaCase): {
  query: AnyTensor;
  key: AnyTensor;
  value: AnyTensor;
  attn_mask?: AnyTensor;
  key_padding_mask?: AnyTensor;
} {
  const query = c.inputs["query"]!;
  const masks = Object.fromEntries(
    ["attn_mask", "key_padding_mask"].filter((n) => c.inputs[n]).map((n) => [n, c.inputs[n]!]),
  );
  return {
    query,
    key: c.selfAttention ? query : c.inputs["key"]!,
    value: c.selfAttention ? query : c.inputs["value"]!,
    ...masks,
  };
}
