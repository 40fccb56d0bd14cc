// Fusions of the ops around attention in a transformer block, where nothing watches the values they remove:
// - projection → gelu becomes one `linear-gelu` step (the MLP's first half) when the projection's output (the
//   pre-activation) has no other reader, is no output, is not watched and is not pinned;
// - add → layer-norm becomes one `add-layer-norm` step that writes [sum | norm] side by side, and the add's and the
//   layer norm's nodes become slices of it (views). The sum stays a value of its own, so other readers (the next
//   residual add), taps and outputs still see it: nothing has to be given up for this fusion, which is why a tap on
//   either node does not prevent it.
// Each applies only where an executor has the fused kernel; explain() lists what was fused and what was kept and why.
import type { OpGraph } from "@attngraph/graph";
import type { FusionContext } from "./fusion.js";
import type { PassReport } from "../plan.js";
import { consumerCounts, watchedAs, type DraftStep } from "./draft.js";
import { anySupports, FusionLog, fusedInPlaceOf } from "./fusion-log.js";

/** What the block and backward fusions read: the forward fusion's context and the graph itself. */
export interface BlockFusionContext extends FusionContext {
  readonly graph: OpGraph;
}

export function fuseBlockOps(
  steps: readonly DraftStep[],
  ctx: BlockFusionContext,
): { steps: DraftStep[]; report: PassReport } {
  const log = new FusionLog();
  let out = fuseLinearGelu(steps, ctx, log);
  out = fuseAddLayerNorm(out, ctx, log);
  return { steps: out, report: { pass: "block fusion", summary: log.summary() } };
}

function fuseLinearGelu(steps: readonly DraftStep[], ctx: BlockFusionContext, log: FusionLog): DraftStep[] {
  const { done, kept } = log;
  const byNode = new Map(steps.map((s) => [s.node, s] as const));
  const readers = consumerCounts(steps);
  const outputs = new Set(ctx.outputs);
  const replaced = new Map<string, DraftStep>();
  const dropped = new Set<string>();
  for (const g of steps) {
    if (g.kind !== "gelu" || g.fused) continue;
    const p = g.inputs[0] === undefined ? undefined : byNode.get(g.inputs[0]);
    if (p?.kind !== "projection" || p.fused) continue;
    const why = ctx.watched.has(p.node)
      ? watchedAs(ctx.patched, p.node)
      : outputs.has(p.node)
        ? "an output"
        : readers.get(p.node) !== 1
          ? "read elsewhere"
          : ctx.overrides.has(p.node) || ctx.overrides.has(g.node)
            ? "placed by the user"
            : undefined;
    if (why) {
      kept.push(
        `${g.node} (${why === "placed by the user" ? `${ctx.overrides.has(p.node) ? p.node : g.node} is ${why}` : `${p.node} is ${why}`})`,
      );
      continue;
    }
    const attrs = { approximate: g.attrs.approximate ?? "none" };
    if (!anySupports(ctx.executors, "linear-gelu", attrs)) {
      kept.push(`${g.node} (no executor has a linear-gelu kernel)`);
      continue;
    }
    replaced.set(g.node, fusedInPlaceOf(g, "linear-gelu", attrs, p.inputs, [p.node, g.node]));
    dropped.add(p.node);
    done.push(`${p.node} + ${g.node} → linear-gelu`);
  }
  return steps.filter((s) => !dropped.has(s.node)).map((s) => replaced.get(s.node) ?? s);
}

function fuseAddLayerNorm(steps: readonly DraftStep[], ctx: BlockFusionContext, log: FusionLog): DraftStep[] {
  const { done, kept } = log;
  const byNode = new Map(steps.map((s) => [s.node, s] as const));
  const taken = new Set<string>();
  // add node → [fused step, the add's slice]; layer-norm node → its slice
  const atAdd = new Map<string, DraftStep[]>();
  const atNorm = new Map<string, DraftStep>();
  for (const ln of steps) {
    if (ln.kind !== "layer-norm" || ln.fused) continue;
    const add = ln.inputs[0] === undefined ? undefined : byNode.get(ln.inputs[0]);
    if (add?.kind !== "add" || add.fused || taken.has(add.node)) continue;
    if (ctx.patched?.has(add.node)) {
      kept.push(`${ln.node} (${add.node} is patched: the fused step would normalise the sum before the override)`);
      continue;
    }
    const pinned = [add.node, ln.node].find((n) => ctx.overrides.has(n));
    if (pinned) {
      kept.push(`${ln.node} (${pinned} is placed by the user)`);
      continue;
    }
    const e = add.shape[add.shape.length - 1];
    if (typeof e !== "number") {
      kept.push(`${ln.node} (${add.node}'s last dim is symbolic: [sum | norm] needs it known)`);
      continue;
    }
    const name = `${add.node}+${ln.node}`;
    if (ctx.graph.has(name) || byNode.has(name)) {
      kept.push(`${ln.node} (a value is already named ${name})`);
      continue;
    }
    const attrs = { eps: ln.attrs.eps };
    if (!anySupports(ctx.executors, "add-layer-norm", attrs)) {
      kept.push(`${ln.node} (no executor has an add-layer-norm kernel)`);
      continue;
    }
    taken.add(add.node);
    const lead = add.shape.slice(0, -1);
    const fused: DraftStep = {
      node: name,
      kind: "add-layer-norm",
      attrs,
      inputs: [add.inputs[0], add.inputs[1], ln.inputs[1], ln.inputs[2]],
      shape: [...lead, 2 * e],
      fused: [add.node, ln.node],
    };
    const slice = (node: string, start: number, shape: DraftStep["shape"]): DraftStep => ({
      node,
      kind: "slice",
      attrs: { axis: -1, start, size: e },
      inputs: [name],
      shape,
    });
    atAdd.set(add.node, [fused, slice(add.node, 0, add.shape)]);
    atNorm.set(ln.node, slice(ln.node, e, ln.shape));
    done.push(`${add.node} + ${ln.node} → add-layer-norm (both kept as views of ${name})`);
  }
  return steps.flatMap((s) => atAdd.get(s.node) ?? [atNorm.get(s.node) ?? s]);
}
