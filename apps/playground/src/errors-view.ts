// Errors in words. Each kind gets a plain lead ("Bad config", "Executor", "Run failed", "Golden case", "Diff
// executors", and the Model tab's "Model file", "Generation", "Attention"), then the library's own message, which
// names the key or node, what was expected and what came.
import { el } from "./config-form.js";

export type ErrorKind = "config" | "executor" | "run" | "case" | "diff" | "model" | "generate" | "attention";

const LEADS: Record<ErrorKind, string> = {
  config: "Bad config",
  executor: "Executor",
  run: "Run failed",
  case: "Golden case",
  diff: "Diff executors",
  model: "Model file",
  generate: "Generation",
  attention: "Attention",
};

/** Which kind an error thrown by a run is, from its class name (the classes' Symbol markers survive bundling too). */
export function kindOf(error: unknown): ErrorKind {
  const name = error instanceof Error ? error.name : "";
  if (name === "ConfigError" || name === "SizeError") return "config";
  if (name === "ExecutorUnavailableError" || name === "UnsupportedError") return "executor";
  if (name === "CaseFormatError") return "case";
  return "run";
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export interface ErrorsView {
  show(kind: ErrorKind, error: unknown): void;
  clear(kind?: ErrorKind): void;
}

export function createErrorsView(container: HTMLElement): ErrorsView {
  const shown = new Map<ErrorKind, HTMLElement>();
  return {
    show(kind, error) {
      const p = el("p", { "data-kind": kind }, [el("strong", {}, [`${LEADS[kind]}: `]), messageOf(error)]);
      shown.get(kind)?.remove();
      shown.set(kind, p);
      container.append(p);
    },
    clear(kind) {
      for (const [k, p] of shown) {
        if (kind === undefined || k === kind) {
          p.remove();
          shown.delete(k);
        }
      }
    },
  };
}
