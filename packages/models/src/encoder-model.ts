// A torch.nn.TransformerEncoderLayer loaded from its state_dict: run(src, masks) as the module's forward, with
// PyTorch's mask conventions (torch-masks.ts). One graph per combination of masks a caller uses, compiled on first use.
import type { OpGraph } from "@attngraph/graph";
import type { RunOptions } from "@attngraph/runtime";
import { formatShape, Tensor, type AnyTensor } from "@attngraph/tensor";
import type { EncoderLayerConfig } from "./encoder-config.js";
import { encoderLayerGraph, type EncoderMasks } from "./encoder-layer.js";
import { LoadedModel } from "./loaded-model.js";
import { attnMask, keyPaddingMask } from "./torch-masks.js";
import { ModelInputError, checkInputsObject } from "./token-ids.js";

export interface EncoderLayerInputs {
  /** [B, T, E] with batch_first, else [T, B, E]. */
  readonly src: unknown;
  /** [T, T]: bool (int32 or booleans; True = masked) or float additive. */
  readonly src_mask?: unknown;
  /** [B, T]: bool/int (True / 1 = padded key) or float additive. */
  readonly src_key_padding_mask?: unknown;
}

export class EncoderLayerModel extends LoadedModel<EncoderLayerConfig, EncoderMasks> {
  readonly family = "torch-encoder-layer" as const;

  /** One graph per combination of masks. */
  protected buildGraph(masks: EncoderMasks): OpGraph {
    return encoderLayerGraph(this.config, masks);
  }

  protected graphKey(masks: EncoderMasks): string {
    return `${masks.mask ?? "-"}/${masks.keyPadding ? "pad" : "-"}`;
  }

  get description(): string {
    const c = this.config;
    return `torch.nn.TransformerEncoderLayer(d_model=${c.dModel}, nhead=${c.nHead}, dim_feedforward=${c.dimFeedforward}, activation="${c.activation}", layer_norm_eps=${c.layerNormEps}, batch_first=${c.batchFirst ? "True" : "False"}, norm_first=${c.normFirst ? "True" : "False"}, bias=${c.bias ? "True" : "False"})`;
  }

  /**
   * The graph a forward call runs (one per combination of masks) and its inputs, PyTorch's masks turned into
   * attngraph's, every shape checked before anything runs: what run() feeds, and what a tool (a diff, an export) takes.
   */
  prepare(inputs: EncoderLayerInputs): { graph: OpGraph; inputs: Record<string, AnyTensor>; masks: EncoderMasks } {
    const c = this.config;
    checkInputsObject(inputs, "{ src, src_mask?, src_key_padding_mask? }");
    const src = inputs.src;
    if (!Tensor.isTensor(src) || src.dtype !== "float32" || src.shape.length !== 3 || src.shape[2] !== c.dModel) {
      throw new ModelInputError(
        "src",
        "the layer's input",
        `a float32 tensor ${c.batchFirst ? "[B, T" : "[T, B"}, ${c.dModel}] (batch_first=${c.batchFirst ? "True" : "False"})`,
        Tensor.isTensor(src) ? `${src.dtype} ${formatShape(src.shape)}` : typeof src,
      );
    }
    const [B, T] = c.batchFirst ? [src.shape[0]!, src.shape[1]!] : [src.shape[1]!, src.shape[0]!];
    const feed: Record<string, AnyTensor> = { src };
    const masks: { mask?: "mask" | "bias"; keyPadding?: boolean } = {};
    if (inputs.src_mask !== undefined && inputs.src_mask !== null) {
      const m = attnMask("src_mask", inputs.src_mask, T);
      masks.mask = m.kind;
      feed[m.kind === "mask" ? "src_mask" : "src_bias"] = m.tensor;
    }
    if (inputs.src_key_padding_mask !== undefined && inputs.src_key_padding_mask !== null) {
      masks.keyPadding = true;
      feed["src_key_padding_mask"] = keyPaddingMask("src_key_padding_mask", inputs.src_key_padding_mask, B, T);
    }
    return { graph: this.graph(masks), inputs: feed, masks };
  }

  /** The layer's forward: `output` shaped like src. */
  async run(inputs: EncoderLayerInputs, options: RunOptions = {}): Promise<{ output: Tensor }> {
    const { inputs: feed, masks } = this.prepare(inputs);
    const out = await (await this.session(masks)).run(feed, options);
    return { output: out["output"]! };
  }
}
