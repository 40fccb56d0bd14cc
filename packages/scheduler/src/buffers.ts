// Buffer planning: the values that compute steps produce share one arena per executor, by liveness. A value lives from
// the step that writes it to the last step that reads it or any view of it (a view aliases its source's memory);
// outputs live to the end of the run. Two values may share bytes only when their lifetimes do not overlap, so a kernel
// never writes over an input it is reading. Placement is greedy by size (largest first, lowest free offset), the
// method TensorFlow Lite's arena planner uses.
import { sizeOf, type Shape } from "@attngraph/tensor";
import type { Plan } from "./plan.js";

/** Offsets are in elements (float32), aligned to 16 elements (64 bytes). */
const ALIGN = 16;

export interface BufferPlan {
  /** Value → executor and element offset in that executor's arena. */
  readonly offsets: ReadonlyMap<string, { readonly executor: string; readonly offset: number }>;
  /** Arena size in elements, per executor. */
  readonly arenaElements: ReadonlyMap<string, number>;
  /** Bytes of all arenas together: the planned peak. */
  readonly peakBytes: number;
  /** Bytes of every value computed in the run, as if each had its own buffer. */
  readonly unplannedBytes: number;
}

interface Interval {
  readonly name: string;
  readonly executor: string;
  readonly size: number;
  readonly start: number;
  readonly end: number;
}

/**
 * Plans the arena for one binding of shapes. `canPlan(executor)` says whether an executor takes planned destinations.
 * Only compute steps are planned; views alias their source and copies are allocated by their kernel.
 */
export function planBuffers(
  plan: Plan,
  shapes: ReadonlyMap<string, Shape>,
  canPlan: (executor: string) => boolean,
): BufferPlan {
  // The value whose memory a step's result may live in. Views alias their input; so may a "copy" step, which copies
  // only when the layout forbids a view (a reshape of a slice is often still a view), so it is treated like one.
  const root = new Map<string, string>();
  for (const s of plan.steps)
    root.set(s.node, s.layout === "compute" ? s.node : (root.get(s.inputs[0]!) ?? s.inputs[0]!));
  const end = new Map<string, number>();
  const extend = (v: string, at: number) => {
    const r = root.get(v) ?? v;
    end.set(r, Math.max(end.get(r) ?? -1, at));
  };
  for (const [v, at] of plan.lastUse) extend(v, at);
  // A kept value outlives the run, so neither it nor the value it is a view of may sit in an arena the next run reuses.
  const pinned = new Set([...plan.kept].map((v) => root.get(v) ?? v));

  // One buffer per planned value, except that an in-place op (declared `inPlace` on its OpDef) takes over its input's
  // buffer when that input dies at this very step and has the same size.
  let unplanned = 0;
  const bufferOf = new Map<string, Interval & { members: string[] }>();
  const buffers: (Interval & { members: string[] })[] = [];
  plan.steps.forEach((s, i) => {
    if (s.layout === "view") return;
    const size = sizeOf(shapes.get(s.node) ?? []);
    unplanned += size * 4;
    if (s.layout !== "compute" || !canPlan(s.placement.executor) || pinned.has(s.node)) return;
    const until = Math.max(i, end.get(s.node) ?? i);
    const k = s.fused ? undefined : plan.graph.registry.get(s.kind, s.node).inPlace;
    const src = k === undefined ? undefined : s.inputs[k];
    const host = src === undefined ? undefined : bufferOf.get(src);
    if (
      host &&
      root.get(src!) === src &&
      end.get(src!) === i &&
      host.size === size &&
      host.executor === s.placement.executor
    ) {
      const grown = { ...host, end: Math.max(host.end, until), members: [...host.members, s.node] };
      buffers[buffers.indexOf(host)] = grown;
      for (const m of grown.members) bufferOf.set(m, grown);
      return;
    }
    const b = { name: s.node, executor: s.placement.executor, size, start: i, end: until, members: [s.node] };
    buffers.push(b);
    bufferOf.set(s.node, b);
  });
  const intervals: (Interval & { members: string[] })[] = buffers;

  const offsets = new Map<string, { executor: string; offset: number }>();
  const arenaElements = new Map<string, number>();
  const placed: (Interval & { offset: number })[] = [];
  for (const iv of [...intervals].sort((a, b) => b.size - a.size || a.start - b.start)) {
    const busy = placed
      .filter((p) => p.executor === iv.executor && p.start <= iv.end && iv.start <= p.end)
      .sort((a, b) => a.offset - b.offset);
    let offset = 0;
    for (const p of busy) {
      if (offset + iv.size <= p.offset) break;
      offset = Math.max(offset, align(p.offset + p.size));
    }
    placed.push({ ...iv, offset });
    for (const m of iv.members) offsets.set(m, { executor: iv.executor, offset });
    arenaElements.set(iv.executor, Math.max(arenaElements.get(iv.executor) ?? 0, align(offset + iv.size)));
  }
  const peak = [...arenaElements.values()].reduce((a, n) => a + n * 4, 0);
  return { offsets, arenaElements, peakBytes: peak, unplannedBytes: unplanned };
}

function align(n: number): number {
  return Math.ceil(n / ALIGN) * ALIGN;
}
