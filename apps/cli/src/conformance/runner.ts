// The conformance runner behind `attngraph conformance <dir> --executor <name>`: every *.json case in a folder, one
// line per case, and a closing "N passed, N failed". A case file that cannot be read is a failed case, never a crash.
import type { Executor } from "@attngraph/graph";
import { clip } from "@attngraph/tensor";
import { caseOf, expectKind, readDocument } from "../document.js";
import { listJson } from "../files.js";
import {
  notCheckedText,
  notComparedText,
  runCase,
  runFlexCase,
  type CaseResult,
  type RunCaseOptions,
} from "./run-case.js";
import { runTrainCase } from "./run-train-case.js";
import { runModelCase } from "./run-model-case.js";

export interface ConformanceOptions extends Omit<RunCaseOptions, "executors"> {
  /** Makes the executors for one case (fresh per case, so one case's failure cannot leak into the next). */
  readonly executors: () => readonly Executor[] | Promise<readonly Executor[]>;
  /** Called after each case, e.g. to print its line as soon as it is known. */
  readonly onResult?: (r: CaseResult) => void;
}

export interface ConformanceSummary {
  readonly results: readonly CaseResult[];
  readonly passed: number;
  readonly failed: number;
}

export async function runConformance(dir: string, options: ConformanceOptions): Promise<ConformanceSummary> {
  const results: CaseResult[] = [];
  for (const file of listJson(dir)) {
    let r: CaseResult;
    try {
      const doc = readDocument(file);
      expectKind(doc, "conformance", ["case"]); // a graph document or a repro among the cases fails, saying so
      const loaded = caseOf(doc);
      const run = { ...options, executors: await options.executors() };
      r =
        loaded.format === "train"
          ? await runTrainCase(loaded.case, run)
          : loaded.format === "flex"
            ? await runFlexCase(loaded.case, run)
            : loaded.format === "models"
              ? await runModelCase(loaded.case, run)
              : await runCase(loaded.case, run);
    } catch (e) {
      r = {
        file,
        name: file
          .split("/")
          .pop()!
          .replace(/\.json$/, ""),
        ok: false,
        checks: [],
        error: e instanceof Error ? e.message : String(e),
      };
    }
    results.push(r);
    options.onResult?.(r);
  }
  const passed = results.filter((r) => r.ok).length;
  return { results, passed, failed: results.length - passed };
}

/**
 * One line: `PASS name  (7 tensors, worst: weights 1.2e-07)` or `FAIL name  output: 3 of 48 off, worst |got-v| ...`;
 * tensors the tap mode could not compare are named at the end (`; not compared under --tap none: weights`).
 */
export function formatResult(r: CaseResult): string {
  const status = r.ok ? "PASS" : "FAIL";
  const name = clip(r.name); // the case file's own string: a 4 MB name must not make a 4 MB line
  // Our errors are short already; one from below (a TypeError's message) has no bound of its own.
  if (r.error)
    return `${status} ${name}  ${clip(r.error, 599)}${r.notChecked?.length ? `; ${clip(notCheckedText(r.notChecked), 300)}` : ""}`;
  const note =
    (r.notCompared?.length ? `; ${notComparedText(r.notCompared)}` : "") +
    (r.notChecked?.length ? `; ${notCheckedText(r.notChecked)}` : "") +
    (r.notes?.length ? `; ${r.notes.map((n) => clip(n, 200)).join("; ")}` : "");
  const worst = [...r.checks].sort((a, b) => (b.worst?.error ?? Infinity) - (a.worst?.error ?? Infinity))[0];
  const failing = r.checks.filter((k) => !k.ok);
  if (r.ok)
    return `${status} ${name}  (${r.checks.length} tensors, worst: ${worst ? `${worst.name} ${fmt(worst.worst?.error ?? 0)}` : "none"}${note})`;
  const details = failing.map((k) =>
    k.problem
      ? `${k.name}: ${k.problem}`
      : `${k.name}: ${k.failures} of ${k.size} off, worst at ${k.worst!.index}: got ${k.worst!.got}, expected ${k.worst!.expected} (|diff| ${fmt(k.worst!.error)})`,
  );
  return `${status} ${name}  ${details.join("; ")}${note}`;
}

export function formatSummary(s: ConformanceSummary): string {
  return `${s.passed} passed, ${s.failed} failed`;
}

function fmt(x: number): string {
  return Number.isFinite(x) ? x.toExponential(2) : String(x);
}
