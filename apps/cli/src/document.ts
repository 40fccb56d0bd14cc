// A JSON file the CLI was given — a golden case, a graph document or a repro — read once and told apart by its
// `format` field, so a command handed the wrong kind says what it got and which command takes that kind, instead of
// failing on the first field its own format misses (`$.name: missing field` for a graph given to `run`).
import { GRAPH_FORMAT } from "@attngraph/graph";
import { clip } from "@attngraph/tensor";
import {
  CaseFormatError,
  quotedErrorText,
  isFlexCaseJSON,
  isModelCaseJSON,
  isTrainCaseJSON,
  parseCase,
  parseFlexCase,
  parseModelCase,
  parseTrainCase,
  type FlexCase,
  type GoldenCase,
  type ModelCase,
  type TrainCase,
} from "@attngraph/testkit";
import { REPRO_FORMAT } from "@attngraph/tools";
import { readText } from "./files.js";
import { UsageError } from "./io.js";

export type DocumentKind = "case" | "graph" | "repro";

export interface JsonDocument {
  readonly path: string;
  readonly json: unknown;
  readonly kind: DocumentKind;
}

export type LoadedCase =
  | { readonly format: "attention"; readonly case: GoldenCase }
  | { readonly format: "train"; readonly case: TrainCase }
  | { readonly format: "flex"; readonly case: FlexCase }
  | { readonly format: "models"; readonly case: ModelCase };

const KINDS: Record<DocumentKind, { readonly what: string; readonly takenBy: string }> = {
  case: { what: "a golden case", takenBy: "attngraph run, diff, export or conformance" },
  graph: { what: "a graph document", takenBy: "attngraph diff (with --dims) or attngraph export" },
  repro: { what: "a repro", takenBy: "attngraph run or attngraph diff" },
};

/** Reads and parses `path`; a file that is not JSON is a CaseFormatError naming it (golden cases have no `format`). */
export function readDocument(path: string, flag?: string): JsonDocument {
  const text = readText(path, flag);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new CaseFormatError(path, undefined, "invalid JSON", "a JSON document", quotedErrorText(e), e);
  }
  const format = typeof json === "object" && json !== null ? (json as Record<string, unknown>)["format"] : undefined;
  return { path, json, kind: format === GRAPH_FORMAT ? "graph" : format === REPRO_FORMAT ? "repro" : "case" };
}

/** A UsageError unless `doc` is one of the `accepted` kinds: `who` ("run", "train --init") expected those. */
export function expectKind(doc: JsonDocument, who: string, accepted: readonly DocumentKind[]): void {
  if (accepted.includes(doc.kind)) return;
  const expected = accepted.map((k) => KINDS[k].what).join(" or ");
  throw new UsageError(
    `${who}: ${clip(doc.path)} is ${KINDS[doc.kind].what}, expected ${expected}; ${KINDS[doc.kind].what} goes to ${KINDS[doc.kind].takenBy}`,
  );
}

/**
 * The golden case in `doc`, of any format: a golden-train case has a `kind` (block, mha-backward, train), a golden-flex
 * case a `scoreMod` or `maskMod` beside its `attention`, a golden-models case the name of its `.safetensors` weights.
 */
export function caseOf(doc: JsonDocument): LoadedCase {
  if (isModelCaseJSON(doc.json)) return { format: "models", case: parseModelCase(doc.json, doc.path) };
  if (isTrainCaseJSON(doc.json)) return { format: "train", case: parseTrainCase(doc.json, doc.path) };
  if (isFlexCaseJSON(doc.json)) return { format: "flex", case: parseFlexCase(doc.json, doc.path) };
  return { format: "attention", case: parseCase(doc.json, doc.path) };
}
