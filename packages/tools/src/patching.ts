// Clean → corrupted activation patching: run the corrupted input with one node (or one head of it) set to its value
// in the clean run, and measure how much of the clean behaviour that restores.
import type { Session } from "@attngraph/runtime";
import { GraphValidationError } from "@attngraph/graph";
import type { AnyTensor, Tensor } from "@attngraph/tensor";
import type { CachedRun } from "./cache.js";
import { checkHeads, checkRunShapes, editable, forHead, withData } from "./heads.js";
import { requireHeadsAxis } from "./heads-axis.js";

export interface PatchingOptions {
  /** The nodes to patch, one at a time; each must be in the clean run's cache. */
  readonly nodes: readonly string[];
  /** A number from a run's outputs (a logit difference, a loss): what patching is judged by. */
  readonly metric: (outputs: Readonly<Record<string, Tensor>>) => number;
  /** Patch each head of a [B, H, ...] node on its own instead of the whole node. */
  readonly perHead?: boolean;
}

export interface PatchEffect {
  readonly node: string;
  /** The head patched (perHead), else undefined. */
  readonly head?: number;
  /** The metric of the corrupted run with this patch. */
  readonly metric: number;
  /** metric − the corrupted run's metric. */
  readonly effect: number;
  /** effect / (clean − corrupted): 1 = the patch restores the clean metric, 0 = it changes nothing; null when clean = corrupted. */
  readonly recovered: number | null;
}

export interface PatchingResult {
  readonly clean: number;
  readonly corrupted: number;
  readonly effects: readonly PatchEffect[];
}

/**
 * Runs `corrupted` once as is and once per node (or per head of each node) with that node's value taken from `clean`
 * (a runWithCache result holding every node named in `options.nodes`), and reports each patch's effect on the metric.
 * The clean and corrupted inputs must give the patched nodes the same shapes (an OverrideError naming the node
 * otherwise).
 */
export async function patchFrom(
  session: Session,
  clean: CachedRun,
  corrupted: Readonly<Record<string, AnyTensor>>,
  options: PatchingOptions,
): Promise<PatchingResult> {
  const missing = options.nodes.find((n) => !clean.cache.has(n));
  if (missing !== undefined)
    throw new GraphValidationError(
      `patchFrom ${missing}`,
      "not in the clean run's cache: name it in runWithCache",
      "a cached node",
      missing,
    );
  const cleanMetric = options.metric(clean.outputs);
  // Every run draws the same dropout masks (step 0), so in training mode the runs compared differ by the patch alone.
  const corruptedMetric = options.metric(await session.run(corrupted, { dropoutStep: 0 }));
  const span = cleanMetric - corruptedMetric;
  const effects: PatchEffect[] = [];
  const measure = async (node: string, override: Tensor | ((value: Tensor) => Tensor), head?: number) => {
    const metric = options.metric(await session.run(corrupted, { override: { [node]: override }, dropoutStep: 0 }));
    const effect = metric - corruptedMetric;
    effects.push({
      node,
      ...(head === undefined ? {} : { head }),
      metric,
      effect,
      recovered: span === 0 ? null : effect / span,
    });
  };
  const axes = new Map(
    options.perHead ? options.nodes.map((n) => [n, requireHeadsAxis(session.graph, n, `patchFrom ${n}`)] as const) : [],
  );
  for (const node of options.nodes) {
    const source = clean.cache.get(node)!;
    if (!options.perHead) {
      await measure(node, source);
      continue;
    }
    const axis = axes.get(node)!;
    checkHeads(node, source, [], axis);
    for (let h = 0; h < source.shape[axis]!; h++) {
      await measure(node, (value) => withHeadFrom(node, value, source, h, axis), h);
    }
  }
  return { clean: cleanMetric, corrupted: corruptedMetric, effects };
}

/** `value` with head `h` (on `axis`) copied from `source` (same shape). */
function withHeadFrom(node: string, value: Tensor, source: Tensor, h: number, axis: number): Tensor {
  checkHeads(node, value, [h], axis);
  checkRunShapes(node, source, value);
  const data = editable(value);
  const from = source.toFloat32Array();
  forHead(value, axis, h, (start, end) => data.set(from.subarray(start, end), start));
  return withData(value, data);
}
