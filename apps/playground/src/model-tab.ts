// The Model tab: a GPT-2-family .safetensors file (picked or dropped) loaded with loadModel on the picked executor,
// a prompt generated from token by token (generate() on the model's KV-cache decoder, shown as it streams), and a
// click on any token drawing every layer's and head's attention row for it, from one forward run of the sequence.
// The model itself lives in a ModelSlot (newest load wins); clicks are numbered the same way, so a slow one never
// draws over a newer one.
import type { Decoder } from "@attngraph/runtime";
import { renderAttentionGrid } from "./attention-grid.js";
import { attentionRows, contextWindow } from "./attention-rows.js";
import { createErrorsView, kindOf, messageOf } from "./errors-view.js";
import { executorsFor, type ExecutorEntry } from "./executors.js";
import { attentionPatterns } from "./model-attention.js";
import { createModelForm } from "./model-form.js";
import { startGeneration, type Generation } from "./model-generation.js";
import type { ModelFile } from "./model-loader.js";
import { GPT2_VOCAB, promptIds, tokenLabel } from "./model-prompt.js";
import { parseGenerateSettings, type GenerateSettings } from "./model-settings.js";
import { ModelSlot, type LoadedModel } from "./model-slot.js";
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

export function createModelTab(v: ModelTabElements, executors: readonly ExecutorEntry[]): void {
  const errors = createErrorsView(v.errors);
  const f = createModelForm(v.form, executors);
  const strip = createTokenStrip(v.tokens, (i) => void pick(i));
  const slot = new ModelSlot(executorsFor);
  let generation: Generation | undefined;
  let pickSeq = 0;
  /** New tokens of the latest generation. */
  let count = 0;

  function setStatus(state: string, text: string, n?: number): void {
    v.status.dataset.state = state;
    v.status.dataset.count = String(n ?? 0);
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

  function describe(file: ModelFile, loaded: LoadedModel | undefined): void {
    v.description.textContent = loaded ? `${file.name}: ${loaded.model.description}` : `${file.name}: not loaded`;
    v.description.dataset.loaded = String(loaded !== undefined);
  }

  /** (Re)loads the held file with the form's heads and executor; the model, or undefined (the error is shown). */
  async function load(): Promise<LoadedModel | undefined> {
    errors.clear("model");
    errors.clear("executor");
    stopGeneration();
    const exec = f.executor.value;
    const heads = f.heads.value.trim() === "" ? undefined : Number(f.heads.value);
    const file = slot.file;
    if (file) setStatus("loading", `loading ${file.name} on ${exec}…`);
    const out = await slot.load(exec, heads);
    if (out.kind === "stale") return undefined;
    if (out.kind === "failed") {
      if (file) describe(file, undefined);
      if (out.headsHint !== undefined && f.heads.value === "") {
        // Only a guess: GPT-2's own head count for this width. The user checks it and presses Load.
        f.heads.value = String(out.headsHint);
        errors.show(
          "model",
          new Error(
            `${messageOf(out.error)}; heads is prefilled with ${out.headsHint}, GPT-2's count for n_embd ${file?.width}: check it and press Load`,
          ),
        );
      } else {
        errors.show(kindOf(out.error) === "executor" ? "executor" : "model", out.error);
      }
      setStatus("error", `${file?.name ?? "no file"}: not loaded, see the error`);
      return undefined;
    }
    const { model, file: loadedFile } = out.loaded;
    describe(loadedFile, out.loaded);
    const V = model.config.vocabSize;
    f.promptHint.textContent =
      V === GPT2_VOCAB
        ? "text, through GPT-2's tokenizer; new tokens stream in as text"
        : `token ids separated by spaces, each in [0, ${V}) (vocab ${V} has no tokenizer); new tokens show as ids`;
    f.prompt.placeholder = V === GPT2_VOCAB ? "Hello, my name is" : "1 2 3";
    f.heads.value = String(model.config.nHead);
    setStatus("loaded", `${loadedFile.name} loaded on ${exec}: press Generate`);
    return out.loaded;
  }

  async function openFile(picked: File): Promise<void> {
    errors.clear();
    stopGeneration();
    strip.reset([]);
    clearGrid("click a token to see its attention");
    try {
      await slot.open(picked.name, new Uint8Array(await picked.arrayBuffer()));
    } catch (e) {
      v.description.textContent = `${picked.name}: not a .safetensors file this page can read`;
      v.description.dataset.loaded = "false";
      errors.show("model", e);
      setStatus("error", `${picked.name}: not loaded, see the error`);
      return;
    }
    f.heads.value = ""; // another file: its heads are read off it, or asked for
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
    const l = slot.loaded?.executor === s.executor ? slot.loaded : await load();
    if (!l) return;
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
      decoder = await l.decoder();
    } catch (e) {
      errors.show("generate", e);
      setStatus("error", "the decoder did not compile: see the error");
      return;
    }
    if (slot.loaded !== l) return; // reloaded meanwhile
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
    const l = slot.loaded;
    if (!l) return;
    const seq = ++pickSeq;
    strip.select(index);
    errors.clear("attention");
    const ids = strip.ids();
    const labels = strip.labels();
    const w = contextWindow(ids.length, l.model.config.blockSize);
    if (index < w.start) {
      errors.show(
        "attention",
        new Error(
          `token ${index}: outside the model's context (a forward run sees the last ${l.model.config.blockSize} tokens, ${w.start} to ${ids.length - 1})`,
        ),
      );
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
  f.heads.addEventListener("change", () => void (slot.file && load()));
  f.executor.addEventListener("change", () => void (slot.file && load()));
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
