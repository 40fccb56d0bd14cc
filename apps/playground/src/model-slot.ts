// The Model tab's one model: the file it came from (read once, so another head count or executor reloads without
// reading it again), the GptModel loaded from it on an executor, and that model's decoder, compiled on first use and
// kept. Loads are numbered: a load that a newer one overtook disposes its model and says "stale" instead of taking
// the slot. Apart from the page, so it is tested in Node with executors of its own.
import { gpt2Tokenizer, type GptModel, type Tokenizer } from "@attngraph/models";
import type { Executor } from "@attngraph/graph";
import type { Decoder } from "@attngraph/runtime";
import { gptModelOf, needsHeads, readModelFile, suggestedHeads, type ModelFile } from "./model-loader.js";
import { tokenizerFor } from "./model-prompt.js";

export interface LoadedModel {
  /** The file the model was loaded from. */
  readonly file: ModelFile;
  readonly model: GptModel;
  readonly executor: string;
  /** GPT-2's for GPT-2's vocabulary; none for any other (prompts and tokens are then ids). */
  readonly tokenizer: Tokenizer | undefined;
  /** The model's KV-cache decoder: compiled on the first call (again after a failed compile), then the same one. */
  decoder(): Promise<Decoder>;
}

export type LoadOutcome =
  | { readonly kind: "loaded"; readonly loaded: LoadedModel }
  /** `headsHint`: GPT-2's head count for the file's width, when only n_head was missing and the width is GPT-2's. */
  | { readonly kind: "failed"; readonly error: unknown; readonly headsHint?: number }
  /** A newer load started meanwhile: this one's model was disposed, the newer one decides. */
  | { readonly kind: "stale" };

export class ModelSlot {
  readonly #executorsFor: (name: string) => Promise<Executor[]>;
  #file: ModelFile | undefined;
  #loaded: (LoadedModel & { dispose(): Promise<void> }) | undefined;
  #seq = 0;

  /** `executorsFor(name)`: the executors a model on `name` compiles with (the page's: the picked one, then cpu). */
  constructor(executorsFor: (name: string) => Promise<Executor[]>) {
    this.#executorsFor = executorsFor;
  }

  get file(): ModelFile | undefined {
    return this.#file;
  }

  get loaded(): LoadedModel | undefined {
    return this.#loaded;
  }

  /** Reads a new file and drops the model of the one before. A file that cannot be read empties the slot and throws. */
  async open(name: string, bytes: Uint8Array): Promise<ModelFile> {
    this.#seq++;
    await this.unload();
    this.#file = undefined;
    this.#file = readModelFile(name, bytes);
    return this.#file;
  }

  /** Loads the held file on `executor` with `heads` (undefined: from the file), replacing the model before. */
  async load(executor: string, heads: number | undefined): Promise<LoadOutcome> {
    const seq = ++this.#seq;
    await this.unload();
    const file = this.#file;
    if (!file)
      return {
        kind: "failed",
        error: new Error("no model file yet: pick a .safetensors file or drop one on this tab"),
      };
    let model: GptModel;
    try {
      model = gptModelOf(file, heads, await this.#executorsFor(executor));
    } catch (error) {
      if (seq !== this.#seq) return { kind: "stale" };
      const hint = needsHeads(error) ? suggestedHeads(file.width) : undefined;
      return hint === undefined ? { kind: "failed", error } : { kind: "failed", error, headsHint: hint };
    }
    if (seq !== this.#seq) {
      await model.dispose();
      return { kind: "stale" };
    }
    let decoder: Promise<Decoder> | undefined;
    this.#loaded = {
      file,
      model,
      executor,
      tokenizer: tokenizerFor(model.config.vocabSize, gpt2Tokenizer),
      decoder: () => {
        decoder ??= model.decoder();
        decoder.catch(() => (decoder = undefined)); // a failed compile is not kept: the next Generate tries again
        return decoder;
      },
      dispose: async () => {
        await (await decoder?.catch(() => undefined))?.dispose();
        await model.dispose();
      },
    };
    return { kind: "loaded", loaded: this.#loaded };
  }

  /** Disposes the model and its decoder (their sessions; the executors are the caller's). The file stays. */
  async unload(): Promise<void> {
    const l = this.#loaded;
    this.#loaded = undefined;
    await l?.dispose();
  }
}
