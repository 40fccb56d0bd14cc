// The named variants of the worked examples, each one call to buildAttention with the config that defines it.
import type { OpGraph } from "@attngraph/graph";
import { buildAttention, type AttentionOptions } from "./build.js";
import type { AttentionConfigInput } from "./config.js";

type Sizes = Omit<AttentionConfigInput, "numHeads"> & { numHeads?: number };

/** Single-head self-attention, no mask (the first worked example). */
export function selfAttention(config: Sizes, options: AttentionOptions = {}): OpGraph {
  return buildAttention({ outProj: false, ...config, numHeads: 1, causal: false }, options);
}

/** Single-head causal attention: query i sees keys j <= i. */
export function causalAttention(config: Sizes, options: AttentionOptions = {}): OpGraph {
  return buildAttention({ outProj: false, ...config, numHeads: 1, causal: true }, options);
}

/** Multi-head attention with separate Q/K/V projections (and GQA/MQA through numKvHeads). */
export function multiHeadAttention(config: AttentionConfigInput, options: AttentionOptions = {}): OpGraph {
  return buildAttention(config, options);
}

/** Multi-head attention with one fused QKV projection, split into queries/keys/values by views. */
export function fusedQkvAttention(config: AttentionConfigInput, options: AttentionOptions = {}): OpGraph {
  return buildAttention(config, { ...options, fusedQkv: true });
}
