// The form: every builder config key, the builder options, sizes, seed, executor and the golden-case file input.
// It reads into a PlaygroundConfig without judging the values: normalizeConfig does that, so the page shows the
// library's own error for a bad value.
import type { GoldenCase } from "@attngraph/testkit/case";
import type { ExecutorEntry } from "./executors.js";
import { defaultConfig, type PlaygroundConfig, type PositionKind } from "./playground-config.js";

export interface ConfigForm {
  read(): PlaygroundConfig;
  /** Sets the fields from a loaded case (config and input sizes). */
  showCase(c: GoldenCase | undefined): void;
  select(node: string | undefined): void;
}

export interface FormHandlers {
  onChange(): void;
  onCaseFile(file: File): void;
  onForgetCase(): void;
}

type Field = {
  key: string;
  label: string;
  type: "number" | "checkbox" | "select";
  options?: readonly [string, string][];
  title?: string;
};

const FIELDS: { legend: string; fields: Field[] }[] = [
  {
    legend: "Sizes",
    fields: [
      { key: "batch", label: "batch B", type: "number" },
      { key: "length", label: "query length L", type: "number" },
      { key: "kvLength", label: "key length S (cross)", type: "number" },
      { key: "dIn", label: "dIn", type: "number" },
      { key: "dOut", label: "dOut (E = H·D)", type: "number" },
    ],
  },
  {
    legend: "Variant",
    fields: [
      { key: "numHeads", label: "heads H", type: "number" },
      { key: "numKvHeads", label: "kv heads Hkv", type: "number", title: "Hkv < H: grouped-query; 1: multi-query" },
      { key: "causal", label: "causal", type: "checkbox" },
      { key: "window", label: "window (blank: none)", type: "number", title: "sliding window, needs causal" },
      { key: "scale", label: "scale (blank: 1/√D)", type: "number" },
      {
        key: "position",
        label: "position",
        type: "select",
        options: [
          ["none", "none"],
          ["alibi", "ALiBi"],
          ["rope", "RoPE"],
        ],
      },
      { key: "fusedQkv", label: "fused QKV", type: "checkbox" },
      { key: "qkvBias", label: "QKV bias", type: "checkbox" },
      {
        key: "outProj",
        label: "output projection",
        type: "select",
        options: [
          ["bias", "with bias"],
          ["nobias", "no bias"],
          ["none", "none"],
        ],
      },
      { key: "cross", label: "cross-attention", type: "checkbox" },
    ],
  },
  {
    legend: "Numbers",
    fields: [
      { key: "seed", label: "random seed", type: "number", title: "weights and inputs when no loaded case fits" },
    ],
  },
];

export function createConfigForm(
  form: HTMLFormElement,
  executors: readonly ExecutorEntry[],
  handlers: FormHandlers,
): ConfigForm {
  form.replaceChildren();
  const inputs = new Map<string, HTMLInputElement | HTMLSelectElement>();
  let selected: string | undefined;

  // Executor picker, with what each entry said about this browser.
  const exSet = el("fieldset", {}, [el("legend", {}, ["Executor"])]);
  const exSelect = el("select", { name: "executor", id: "executor" }) as HTMLSelectElement;
  for (const e of executors) exSelect.append(el("option", { value: e.name }, [e.name]));
  const notes = el("ul", { class: "notes", id: "executor-notes" });
  exSet.append(label("executor", exSelect), notes);
  form.append(exSet);
  for (const e of executors) {
    const li = el("li", { "data-executor": e.name }, [`${e.name}: checking…`]);
    notes.append(li);
    void e.available().then((ok) => {
      li.textContent = ok === true ? `${e.name}: available` : `${e.name}: not available here (${ok})`;
      li.className = ok === true ? "yes" : "no";
      const opt = [...exSelect.options].find((o) => o.value === e.name);
      if (opt && ok !== true) opt.textContent = `${e.name} (not available)`;
    });
  }

  // Golden case file.
  const caseSet = el("fieldset", {}, [el("legend", {}, ["Golden case"])]);
  const file = el("input", { type: "file", id: "case-file", accept: ".json,application/json" }) as HTMLInputElement;
  const caseNote = el("p", { id: "case-note", class: "muted" }, ["none loaded: random weights"]);
  const forget = el("button", { type: "button", id: "forget-case", hidden: "" }, [
    "forget the case",
  ]) as HTMLButtonElement;
  caseSet.append(file, caseNote, forget);
  form.append(caseSet);
  file.addEventListener("change", () => {
    const f = file.files?.[0];
    if (f) handlers.onCaseFile(f);
    file.value = ""; // loading the same file again fires change again
  });
  forget.addEventListener("click", () => handlers.onForgetCase());

  for (const group of FIELDS) {
    const set = el("fieldset", {}, [el("legend", {}, [group.legend])]);
    for (const f of group.fields) {
      const input =
        f.type === "select"
          ? (el(
              "select",
              { name: f.key },
              (f.options ?? []).map(([v, t]) => el("option", { value: v }, [t])),
            ) as HTMLSelectElement)
          : (el("input", {
              name: f.key,
              type: f.type,
              ...(f.type === "number" ? { step: "any" } : {}),
            }) as HTMLInputElement);
      if (f.title) input.title = f.title;
      inputs.set(f.key, input);
      set.append(label(f.label, input));
    }
    form.append(set);
  }

  const field = (k: string) => inputs.get(k)!;
  const checkbox = (k: string) => (field(k) as HTMLInputElement).checked;
  /** The value as typed: "" → undefined (the library then says the key is missing), else a number (maybe NaN). */
  const num = (k: string) => (field(k).value.trim() === "" ? undefined : Number(field(k).value));

  const write = (c: PlaygroundConfig) => {
    const a = c.attention;
    const setNum = (k: string, v: unknown) => (field(k).value = v === null || v === undefined ? "" : String(v));
    for (const k of ["dIn", "dOut", "numHeads", "numKvHeads", "window", "scale"]) setNum(k, a[k]);
    for (const k of ["causal", "qkvBias", "cross"]) (field(k) as HTMLInputElement).checked = a[k] === true;
    field("outProj").value = a.outProj === false ? "none" : a.outBias === false ? "nobias" : "bias";
    field("position").value = c.position;
    (field("fusedQkv") as HTMLInputElement).checked = c.fusedQkv;
    setNum("batch", c.batch);
    setNum("length", c.length);
    setNum("kvLength", c.kvLength);
    setNum("seed", c.seed);
    exSelect.value = c.executor;
  };
  write(defaultConfig);

  form.addEventListener("input", (e) => {
    if (e.target !== file) handlers.onChange();
  });
  form.addEventListener("submit", (e) => e.preventDefault());

  return {
    read(): PlaygroundConfig {
      const outProj = field("outProj").value;
      const heads = num("numHeads");
      return {
        attention: {
          dIn: num("dIn"),
          dOut: num("dOut"),
          numHeads: heads,
          numKvHeads: num("numKvHeads") ?? heads,
          causal: checkbox("causal"),
          window: num("window") ?? null,
          scale: num("scale") ?? null,
          qkvBias: checkbox("qkvBias"),
          outProj: outProj !== "none",
          outBias: outProj === "bias",
          cross: checkbox("cross"),
        },
        position: field("position").value as PositionKind,
        fusedQkv: checkbox("fusedQkv"),
        batch: num("batch") ?? NaN,
        length: num("length") ?? NaN,
        kvLength: num("kvLength") ?? NaN,
        seed: num("seed") ?? NaN,
        executor: exSelect.value,
        selected,
      };
    },
    showCase(c) {
      forget.hidden = !c;
      if (!c) {
        caseNote.textContent = "none loaded: random weights";
        return;
      }
      caseNote.textContent = `loaded: ${c.name} (${c.file})`;
      const x = c.inputs.x!.shape;
      write({
        ...this.read(),
        attention: { ...c.config },
        position: "none",
        fusedQkv: false,
        batch: x[0]!,
        length: x[1]!,
        kvLength: c.inputs.kv?.shape[1] ?? x[1]!,
      });
    },
    select(node) {
      selected = node;
    },
  };
}

function label(text: string, control: HTMLElement): HTMLLabelElement {
  return el("label", {}, [el("span", {}, [text]), control]) as HTMLLabelElement;
}

export function el(tag: string, attrs: Record<string, string> = {}, children: (Node | string)[] = []): HTMLElement {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  e.append(...children);
  return e;
}
