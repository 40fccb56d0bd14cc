// The Model tab's loader: a .safetensors file's tensors read once (kept, so a changed head count or executor reloads
// without reading the file again), then loadModel on the picked executors. Only GPT-2-family models are taken: the
// tab generates text, and an encoder layer has no tokens to generate.
import { loadModel, ModelConfigError, type GptModel } from "@attngraph/models";
import { readSafetensors } from "@attngraph/nn";
import type { Executor } from "@attngraph/graph";
import type { AnyTensor } from "@attngraph/tensor";

/** A model file's tensors by state_dict key, and the width its token embedding says (when it has one). */
export interface ModelFile {
  readonly name: string;
  readonly tensors: ReadonlyMap<string, AnyTensor>;
  /** Columns of (transformer.)wte.weight: n_embd. */
  readonly width: number | undefined;
}

/** A model that loaded but is not one this tab runs. */
export class NotGptModelError extends Error {
  constructor(file: string, description: string) {
    super(
      `${file}: the Model tab runs GPT-2-family models (nanoGPT or Hugging Face GPT-2 state_dicts); this file is ${description}`,
    );
    this.name = "NotGptModelError";
  }
}

/** Reads a .safetensors file (a SafetensorsError names what is wrong with it). */
export function readModelFile(name: string, bytes: Uint8Array): ModelFile {
  const { tensors } = readSafetensors(bytes);
  const wte = tensors.get("transformer.wte.weight") ?? tensors.get("wte.weight");
  return { name, tensors, width: wte?.shape.length === 2 ? wte.shape[1] : undefined };
}

/** Heads of GPT-2's released sizes by width (small, medium, large, xl): the n_head field's suggestion. */
const GPT2_HEADS: Readonly<Record<number, number>> = { 768: 12, 1024: 16, 1280: 20, 1600: 25 };

export function suggestedHeads(width: number | undefined): number | undefined {
  return width === undefined ? undefined : GPT2_HEADS[width];
}

/** Whether loading failed only for want of n_head (the page then asks for it). */
export function needsHeads(error: unknown): boolean {
  return error instanceof ModelConfigError && error.subject === "config.n_head";
}

/**
 * The file as a GPT-2-family model on `executors`; `nHead` undefined lets the loader read it off the file (Hugging
 * Face layout at GPT-2's sizes) or say it is needed. Errors are the loader's (StateDictError, ModelConfigError), or a
 * NotGptModelError for another family.
 */
export function gptModelOf(file: ModelFile, nHead: number | undefined, executors: readonly Executor[]): GptModel {
  // Told apart by its keys before loading: the loader would first ask an encoder layer for its nhead.
  if (file.width === undefined && file.tensors.has("self_attn.in_proj_weight"))
    throw new NotGptModelError(file.name, "a torch.nn.TransformerEncoderLayer state_dict");
  const model = loadModel(file.tensors, { executors, ...(nHead === undefined ? {} : { config: { n_head: nHead } }) });
  // By family, not instanceof: the field survives two copies of the package in one bundle.
  if (model.family !== "gpt2") throw new NotGptModelError(file.name, model.description);
  return model;
}
