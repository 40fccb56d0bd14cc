// The Model tab's form: the model file and its head count, the executor, the prompt and generate()'s options, and the
// Generate / Stop buttons. It only builds the controls and reads their strings; model-settings.ts judges them.
import { el } from "./config-form.js";
import type { ExecutorEntry } from "./executor-entry.js";
import { executorSelect } from "./executor-select.js";
import { GENERATE_DEFAULTS, type RawGenerateSettings } from "./model-settings.js";

export interface ModelForm {
  readonly file: HTMLInputElement;
  /** n_head; empty: from the file (GPT-2's sizes) or asked for. */
  readonly heads: HTMLInputElement;
  readonly executor: HTMLSelectElement;
  /** Loads the file again with the heads and executor as they are now. */
  readonly load: HTMLButtonElement;
  readonly prompt: HTMLTextAreaElement;
  readonly promptHint: HTMLElement;
  readonly generate: HTMLButtonElement;
  readonly stop: HTMLButtonElement;
  read(): RawGenerateSettings;
}

const labelled = (text: string, control: HTMLElement) => el("label", {}, [el("span", {}, [text]), control]);
const input = (id: string, attrs: Record<string, string>) =>
  el("input", { id, name: id, ...attrs }) as HTMLInputElement;
const show = (v: number | undefined) => (v === undefined ? "" : String(v));

export function createModelForm(form: HTMLFormElement, executors: readonly ExecutorEntry[]): ModelForm {
  const d = GENERATE_DEFAULTS;
  const file = input("model-file", { type: "file", accept: ".safetensors" });
  const heads = input("model-heads", { type: "number", min: "1", step: "1", placeholder: "from the file" });
  const executor = executorSelect("model-executor", executors, d.executor);
  const load = el("button", { type: "button", id: "model-load" }, ["Load"]) as HTMLButtonElement;
  const prompt = el("textarea", { id: "model-prompt", name: "model-prompt", rows: "3" }) as HTMLTextAreaElement;
  const promptHint = el("p", { class: "notes", id: "model-prompt-hint" }, ["load a model first"]);
  const maxNew = input("model-max-new", { type: "number", min: "1", step: "1", value: String(d.maxNewTokens) });
  const temperature = input("model-temperature", {
    type: "number",
    min: "0",
    step: "any",
    value: String(d.temperature),
  });
  const topK = input("model-top-k", { type: "number", min: "1", step: "1", value: show(d.topK), placeholder: "all" });
  const topP = input("model-top-p", {
    type: "number",
    min: "0",
    max: "1",
    step: "any",
    value: show(d.topP),
    placeholder: "off",
  });
  const seed = input("model-seed", { type: "number", min: "0", step: "1", value: String(d.seed) });
  const greedy = input("model-greedy", { type: "checkbox" });
  greedy.checked = d.greedy;
  const generate = el("button", { type: "button", id: "model-generate" }, ["Generate"]) as HTMLButtonElement;
  const stop = el("button", { type: "button", id: "model-stop", disabled: "" }, ["Stop"]) as HTMLButtonElement;
  form.replaceChildren(
    el("fieldset", {}, [
      el("legend", {}, ["Model"]),
      el("p", { class: "notes" }, [
        "A GPT-2-family .safetensors file (nanoGPT or Hugging Face GPT-2 names): pick it or drop it on the tab.",
      ]),
      labelled("file", file),
      labelled("heads (n_head)", heads),
      labelled("executor", executor),
      el("div", { class: "buttons" }, [load]),
    ]),
    el("fieldset", {}, [el("legend", {}, ["Prompt"]), prompt, promptHint]),
    el("fieldset", {}, [
      el("legend", {}, ["Sampling"]),
      labelled("max new tokens", maxNew),
      labelled("temperature", temperature),
      labelled("top-k", topK),
      labelled("top-p", topP),
      labelled("seed", seed),
      labelled("greedy (argmax)", greedy),
    ]),
    el("div", { class: "buttons" }, [generate, stop]),
  );
  return {
    file,
    heads,
    executor,
    load,
    prompt,
    promptHint,
    generate,
    stop,
    read: () => ({
      executor: executor.value,
      maxNewTokens: maxNew.value,
      temperature: temperature.value,
      topK: topK.value,
      topP: topP.value,
      seed: seed.value,
      greedy: greedy.checked,
    }),
  };
}
