// One executor diff of the page's graph: `diffExecutors` with every node tapped, each side on a fresh executor from its
// entry. Not the page's own executors: a re-run of the page (every form change starts one) would share them with the
// diff's sessions in the middle of its runs, and a diff should not depend on what the page ran before. Both are
// disposed afterwards, whatever happened.
import type { Executor, OpGraph } from "@attngraph/graph";
import type { Tensor } from "@attngraph/tensor";
import { diffExecutors, type DiffResult } from "@attngraph/tools";
import { checkPair } from "./diff-model.js";
import { ExecutorUnavailableError, type ExecutorEntry } from "./executor-entry.js";

export interface DiffSubject {
  readonly graph: OpGraph;
  readonly inputs: Readonly<Record<string, Tensor>>;
  readonly weights: Readonly<Record<string, Tensor>>;
}

/**
 * Diffs `other` against `reference` on `subject`. An entry that cannot run here fails with its reason in words
 * (ExecutorUnavailableError, "webgpu: not available here (navigator.gpu has no adapter)") before anything runs.
 */
export async function runDiff(
  reference: ExecutorEntry,
  other: ExecutorEntry,
  subject: DiffSubject,
): Promise<DiffResult> {
  checkPair(reference.name, other.name);
  for (const entry of [reference, other]) {
    const ok = await entry.available();
    if (ok !== true) throw new ExecutorUnavailableError(entry.name, ok);
  }
  const made: Executor[] = [];
  try {
    for (const entry of [reference, other]) made.push(await entry.fresh());
    return await diffExecutors(subject.graph, {
      executors: made,
      inputs: subject.inputs,
      weights: subject.weights,
      tap: "all",
    });
  } finally {
    // allSettled: a dispose that throws must not hide the diff's own error.
    await Promise.allSettled(made.map(async (e) => e.dispose?.()));
  }
}
