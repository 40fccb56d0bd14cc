// The Model tab: a GPT-2-family .safetensors file (picked or dropped) loaded with loadModel on the picked executor,
// a prompt generated from token by token (generate() on the model's KV-cache decoder, shown as it streams), and a
// click on any token drawing every layer's and head's attention row for it, from one forward run of the sequence.
// Loads and clicks are numbered so a slow one that lost the race never draws over a newer one.
import { gpt2Tokenizer, type GptModel, type Tokenizer } from "@attngraph/models";
import type { Decoder } from "@attngraph/runtime";
import { renderAttentionGrid } from "./attention-grid.js";
import { attentionRows, contextWindow } from "./attention-rows.js";
import { createErrorsView, kindOf } from "./errors-view.js";
import { executorsFor, type ExecutorEntry } from "./executors.js";
import { attentionPatterns } from "./model-attention.js";
import { createModelForm } from "./model-form.js";
import { startGeneration, type Generation } from "./model-generation.js";
import { gptModelOf, needsHeads, readModelFile, suggestedHeads, type ModelFile } from "./model-loader.js";
import { GPT2_VOCAB, promptIds, tokenizerFor, tokenLabel } from "./model-prompt.js";
import { parseGenerateSettings, type GenerateSettings } from "./model-settings.js";
import { createTokenStrip } from "./token-strip.js";

export interface ModelTabElements {
  /** The tab's panel: files dropped anywhere on it are loaded. */
  readonly panel: HTMLElement;
  readonly form: HTMLFormElement;
  readonly errors: HTMLElement;
  readonly description: HTMLElement;
  readonly status: HTMLElement;
  readonly tokens: HTMLElement;
  readonly gridNote: HTMLElement;
  readonly grid: HTMLElement;
  readonly readout: HTMLElement;
}

interface Loaded {
  readonly model: GptModel;
  readonly executor: string;
  readonly tokenizer: Tokenizer | undefined;
  /** Compiled on the first Generate, then kept for this model. */
  decoder?: Promise<Decoder> | undefined;
}

export function createModelTab(v: ModelTabElements, executors: readonly ExecutorEntry[]): void {
  const errors = createErrorsView(v.errors);
  const f = createModelForm(v.form, executors);
  const strip = createTokenStrip(v.tokens, (i) => void pick(i));
  let file: ModelFile | undefined;
  let loaded: Loaded | undefined;
  let generation: Generation | undefined;
  let loadSeq = 0;
  let pickSeq = 0;
  /** New tokens of the latest generation. */
  let count = 0;

  function setStatus(state: string, text: string, count?: number): void {
    v.status.dataset.state = state;
    v.status.dataset.count = String(count ?? 0);
    v.status.textContent = text;
  }

  function running(on: boolean): void {
    f.generate.textContent = on ? "Restart" : "Generate";
    f.stop.disabled = !on;
  }

  function clearGrid(text: string): void {
    v.grid.replaceChildren();
    for (const k of ["layers", "heads", "position", "index"]) delete v.grid.dataset[k];
    v.gridNote.textContent = text;
  }

  function stopGeneration(): void {
    generation?.stop();
    generation = undefined;
    running(false);
  }

  /** Stops what runs on the model, and disposes it (its sessions and decoder; the executors are the page's). */
  async function unload(): Promise<void> {
    stopGeneration();
    const l = loaded;
    loaded = undefined;
    if (!l) return;
    await (await l.decoder?.catch(() => undefined))?.dispose();
    await l.model.dispose();
  }

  /** (Re)loads the held file with the form's heads and executor; false when it did not load (the error is shown). */
  async function load(): Promise<boolean> {
    const seq = ++loadSeq;
    errors.clear("model");
    errors.clear("executor");
    await unload();
    if (!file) {
      errors.show("model", new Error("no model file yet: pick a .safetensors file or drop one on this tab"));
      return false;
    }
    const exec = f.executor.value;
    const heads = f.heads.value.trim() === "" ? undefined : Number(f.heads.value);
    setStatus("loading", `loading ${file.name} on ${exec}…`);
    try {
      const model = gptModelOf(file, heads, await executorsFor(exec));
      if (seq !== loadSeq) return (await model.dispose(), false);
      loaded = { model, executor: exec, tokenizer: tokenizerFor(model.config.vocabSize, gpt2Tokenizer) };
      v.description.textContent = `${file.name}: ${model.description}`;
      v.description.dataset.loaded = "true";
      const V = model.config.vocabSize;
      f.promptHint.textContent = V === GPT2_VOCAB ? "text, through GPT-2's tokenizer; new tokens stream in as text" : `token ids separated by spaces, each in [0, ${V}) (vocab ${V} has no tokenizer); new tokens show as ids`;
      f.prompt.placeholder = V === GPT2_VOCAB ? "Hello, my name is" : "1 2 3";
      f.heads.value = String(model.config.nHead);
      setStatus("loaded", `${file.name} loaded on ${exec}: press Generate`);
      return true;
    } catch (e) {
      if (seq !== loadSeq) return false;
      v.description.textContent = `${file.name}: not loaded`;
      v.description.dataset.loaded = "false";
      const guess = suggestedHeads(file.width);
      if (needsHeads(e) && guess !== undefined && f.heads.value === "") {
        // Only a guess: GPT-2's own head count for this width. The user checks it and presses Load.
        f.heads.value = String(guess);
        errors.show("model", new Error(`${e instanceof Error ? e.message : String(e)}; heads is prefilled with ${guess}, GPT-2's count for n_embd ${file.width}: check it and press Load`));
      } else {
        errors.show(kindOf(e) === "executor" ? "executor" : "model", e);
      }
      setStatus("error", `${file.name} did not load: see the error`);
      return false;
    }
  }

  async function openFile(picked: File): Promise<void> {
    errors.clear();
    try {
      file = readModelFile(picked.name, new Uint8Array(await picked.arrayBuffer()));
    } catch (e) {
      await unload();
      file = undefined;
      v.description.textContent = `${picked.name}: not a .safetensors file this page can read`;
      v.description.dataset.loaded = "false";
      errors.show("model", e);
      setStatus("error", `${picked.name} did not load: see the error`);
      return;
    }
    f.heads.value = ""; // another file: its heads are read off it, or asked for
    strip.reset([]);
    clearGrid("click a token to see its attention");
    await load();
  }

  async function generateNow(): Promise<void> {
    errors.clear("config");
    errors.clear("generate");
    let s: GenerateSettings;
    try {
      s = parseGenerateSettings(f.read());
    } catch (e) {
      errors.show("config", e);
      return;
    }
    stopGeneration();
    if ((!loaded || loaded.executor !== s.executor) && !(await load())) return;
    const l = loaded!;
    let ids: number[];
    try {
      ids = promptIds(f.prompt.value, l.model.config.vocabSize, l.tokenizer);
    } catch (e) {
      errors.show("config", e);
      return;
    }
    strip.reset(ids.map((id) => ({ id, label: tokenLabel(id, l.tokenizer), source: "prompt" as const })));
    clearGrid("click a token to see its attention");
    setStatus("compiling", `compiling the decoder on ${l.executor}…`);
    let decoder: Decoder;
    try {
      l.decoder ??= l.model.decoder();
      decoder = await l.decoder;
    } catch (e) {
      l.decoder = undefined;
      errors.show("generate", e);
      setStatus("error", "the decoder did not compile: see the error");
      return;
    }
    if (loaded !== l) return; // reloaded meanwhile
    count = 0;
    try {
      generation = startGeneration(decoder, ids, s, l.tokenizer, {
        onToken: (_, token, text) => {
          strip.append({ id: token, label: tokenLabel(token, l.tokenizer, text), source: "generated" });
          setStatus("generating", `generating on ${l.executor} · ${++count} of ${s.maxNewTokens}`, count);
        },
        onDone: () => {
          generation = undefined;
          running(false);
          setStatus("done", `done: ${count} new tokens on ${l.executor} · click a token to see its attention`, count);
        },
        onError: (e) => {
          generation = undefined;
          running(false);
          errors.show("generate", e);
          setStatus("error", `generation failed after ${count} tokens: see the error`, count);
        },
      });
    } catch (e) {
      errors.show("generate", e);
      setStatus("error", "generation did not start: see the error");
      return;
    }
    running(true);
    setStatus("generating", `generating on ${l.executor} · 0 of ${s.maxNewTokens}`, 0);
  }

  /** A clicked token: one forward run of the context it is in, its attention rows drawn. */
  async function pick(index: number): Promise<void> {
    const l = loaded;
    if (!l) return;
    const seq = ++pickSeq;
    strip.select(index);
    errors.clear("attention");
    const ids = strip.ids();
    const labels = strip.labels();
    const w = contextWindow(ids.length, l.model.config.blockSize);
    if (index < w.start) {
      errors.show("attention", new Error(`token ${index}: outside the model's context (a forward run sees the last ${l.model.config.blockSize} tokens, ${w.start} to ${ids.length - 1})`));
      return;
    }
    v.gridNote.textContent = `token ${index}: running the model on ${w.length} tokens…`;
    try {
      const tapped = await attentionPatterns(l.model, ids.slice(w.start));
      if (seq !== pickSeq) return;
      const rows = attentionRows(tapped, index - w.start);
      renderAttentionGrid(v.grid, v.readout, rows, labels.slice(w.start));
      v.grid.dataset.index = String(index);
      v.gridNote.textContent = `token ${index} "${labels[index]}" over tokens ${w.start} to ${index}: ${rows.layers.length} layers × ${l.model.config.nHead} heads, from one forward run of ${w.length} tokens on ${l.executor} (transformer.h.*.attn.weights tapped)`;
    } catch (e) {
      if (seq !== pickSeq) return;
      errors.show("attention", e);
      v.gridNote.textContent = "";
    }
  }

  f.file.addEventListener("change", () => {
    const picked = f.file.files?.[0];
    if (picked) void openFile(picked);
  });
  f.load.addEventListener("click", () => void load());
  f.heads.addEventListener("change", () => void (file && load()));
  f.executor.addEventListener("change", () => void (file && load()));
  f.generate.addEventListener("click", () => void generateNow());
  f.stop.addEventListener("click", () => {
    stopGeneration();
    setStatus("stopped", `stopped after ${count} new tokens`, count);
  });
  v.panel.addEventListener("dragover", (e) => {
    e.preventDefault(); // without it the browser opens the dropped file instead
    v.panel.classList.add("dropping");
  });
  v.panel.addEventListener("dragleave", () => v.panel.classList.remove("dropping"));
  v.panel.addEventListener("drop", (e) => {
    e.preventDefault();
    v.panel.classList.remove("dropping");
    const picked = e.dataTransfer?.files[0];
    if (picked) void openFile(picked);
  });
  running(false);
  clearGrid("click a token to see its attention");
  setStatus("idle", "no model: pick a .safetensors file or drop one here");
}
