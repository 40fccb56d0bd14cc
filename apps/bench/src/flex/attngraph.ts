// attngraph's flex rows: the variant's graph (graphs.ts) → compile on one executor → session.run, the way the default
// problem's rows run. The planned peak is the session's buffer plan for the run's input shapes (memoryPlan), checked
// against the memory there is before anything that large is allocated, so a row that cannot fit says so.
import { freemem } from "node:os";
import { compile } from "@attngraph/runtime";
import { Tensor, type AnyTensor } from "@attngraph/tensor";
import { attngraphExecutors, benchAttentionWeights, plannedPeakBytes } from "../impls/attngraph.js";
import { fmtBytes } from "../report.js";
import { flexGraph, flexGatheredNames } from "./graphs.js";
import { flexGathered, type FlexProblem } from "./problem.js";
import type { FlexCase, FlexImpl, FlexRunner } from "./types.js";

/** A row that cannot run for lack of memory: the run goes on, the row says why (FlexRunner's setup throws it). */
export class FlexMemoryError extends Error {
  override name = "FlexMemoryError";
  /** The plan's peak that did not fit, kept on the row. */
  constructor(
    message: string,
    readonly plannedPeakBytes?: number,
  ) {
    super(message);
  }
}

/** The run's inputs: x (layer) or q, k, v (core), and what the variant gathers. */
export function flexInputs(p: FlexProblem, c: FlexCase): Record<string, AnyTensor> {
  const { b, t, d, h } = p.shape;
  const gathered = flexGathered(p, { gathered: flexGatheredNames(c.variant, c.part, p) });
  const fed = Object.fromEntries(Object.entries(gathered).map(([n, g]) => [n, new Tensor(g.data, [...g.shape])]));
  if (c.part === "layer") return { x: new Tensor(p.layer.x, [b, t, d]), ...fed };
  const heads = [b, h, t, d / h];
  return { q: new Tensor(p.q, heads), k: new Tensor(p.k, heads), v: new Tensor(p.v, heads), ...fed };
}

export function attngraphFlexImpl(name: string): FlexImpl {
  const make = attngraphExecutors[name];
  if (!make) throw new Error(`no attngraph executor "${name}"`);
  return {
    name,
    family: "attngraph",
    async setup(p: FlexProblem, c: FlexCase, options): Promise<FlexRunner> {
      const graph = flexGraph(p, c.variant, c.part);
      const executor = await make(options);
      const threading = (executor as { threading?: { threads: number } }).threading;
      const session = await compile(graph, {
        executors: [executor],
        ...(c.part === "layer" ? { weights: benchAttentionWeights(p.layer) } : {}),
      });
      try {
        const inputs = flexInputs(p, c);
        const shapes = Object.fromEntries(Object.entries(inputs).map(([n, t]) => [n, t.shape]));
        const peak = plannedPeakBytes(session, shapes);
        // The cpu executor allocates its arena from the JS heap: a plan larger than the free memory would thrash or
        // kill the process, so it is refused here. The wasm executor refuses past its own limit with an error.
        if (peak !== undefined && peak > freemem())
          throw new FlexMemoryError(
            `out of memory: planned peak ${fmtBytes(peak)} > ${fmtBytes(freemem())} free`,
            peak,
          );
        const outName = graph.outputs[0]!;
        return {
          threads: threading?.threads ?? 1,
          plannedPeakBytes: peak,
          async run() {
            const out = (await session.run(inputs))[outName]!.contiguous();
            return out.data.subarray(out.offset, out.offset + out.size);
          },
          explain: () => session.explain({ inputs: shapes }),
          dispose: () => session.dispose(),
        };
      } catch (e) {
        await session.dispose();
        throw e;
      }
    },
  };
}
