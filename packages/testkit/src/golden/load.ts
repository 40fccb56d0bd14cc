// Reading golden cases from disk (Node only: this file uses node:fs). Parsing and checking live in case.ts.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { clip } from "@attngraph/tensor";
import { parseCase, type GoldenCase } from "./case.js";
import { isTrainCaseJSON, parseTrainCase, type TrainCase } from "./train-case.js";
import { CaseFormatError } from "./errors.js";

/**
 * Absolute path of this package's `golden/` folder. Found by walking up to the folder holding package.json, so it is
 * the same from src/golden/load.ts (tests, source condition) and dist/golden/load.js (published build).
 */
export const goldenDir: string = join(packageRoot(fileURLToPath(import.meta.url)), "golden");

/** Absolute path of this package's `golden-grad/` folder: a copy of shared/golden-grad (attention cases with gradients). */
export const goldenGradDir: string = join(packageRoot(fileURLToPath(import.meta.url)), "golden-grad");

/** Absolute path of this package's `golden-train/` folder: a copy of shared/golden-train (blocks, gradients, training). */
export const goldenTrainDir: string = join(packageRoot(fileURLToPath(import.meta.url)), "golden-train");

/** Absolute path of this package's `golden-flex/` folder: a copy of shared/golden-flex (variants as score/mask modifications). */
export const goldenFlexDir: string = join(packageRoot(fileURLToPath(import.meta.url)), "golden-flex");

/** Absolute path of this package's `golden-models/` folder: a copy of shared/golden-models (checkpoints as PyTorch users have them). */
export const goldenModelsDir: string = join(packageRoot(fileURLToPath(import.meta.url)), "golden-models");

/**
 * Absolute path of `golden-models-extra/`: more cases of the same families (no biases, more layers, untied heads,
 * post-norm ReLU encoders, sequence-first inputs, perturbed weights), made by tooling/golden-models-gen/generate.py.
 */
export const goldenModelsExtraDir: string = join(packageRoot(fileURLToPath(import.meta.url)), "golden-models-extra");

/** Reads and parses one case; an unreadable file or invalid JSON is a CaseFormatError naming the file. */
export function loadCase(path: string): GoldenCase {
  return parseCase(readJSON(path), path);
}

/**
 * Reads one case of either format: a golden-train case (a file with a `kind`: block, mha-backward, train) or an
 * attention case (shared/golden/FORMAT.md).
 */
export function loadAnyCase(
  path: string,
):
  | { readonly format: "attention"; readonly case: GoldenCase }
  | { readonly format: "train"; readonly case: TrainCase } {
  const json = readJSON(path);
  return isTrainCaseJSON(json)
    ? { format: "train", case: parseTrainCase(json, path) }
    : { format: "attention", case: parseCase(json, path) };
}

function readJSON(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new CaseFormatError(path, undefined, "cannot read the file", "a readable JSON file", quotedErrorText(e), e);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new CaseFormatError(path, undefined, "invalid JSON", "a JSON document", quotedErrorText(e), e);
  }
  return json;
}

/** The `*.json` files of a folder, sorted by name, as paths joined onto `dir`. A missing folder is an error. */
export function listCases(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (e) {
    throw new CaseFormatError(
      dir,
      undefined,
      "cannot list the case folder",
      "a readable directory",
      quotedErrorText(e),
      e,
    );
  }
  return names
    .filter((n) => n.endsWith(".json"))
    .sort()
    .map((n) => join(dir, n));
}

function packageRoot(from: string): string {
  for (let dir = dirname(from); ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir)
      throw new CaseFormatError(from, undefined, "no package.json above the testkit module", "a package root", "none");
  }
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this escapes
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/g;

/** The error's own message, cut short and with control characters escaped: parse errors quote the file's bytes. */
export function quotedErrorText(e: unknown): string {
  const s = (e instanceof Error ? e.message : String(e)).replace(
    CONTROL_CHARACTERS,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  return clip(s, 160);
}
