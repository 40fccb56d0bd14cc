// Parameter groups, torch.optim's param_groups: each group names its parameters (a list, or a rule on name and shape)
// and the hyperparameters it sets for them (weight decay, lr, …); each parameter gets the optimizer with its group's
// options. Every trained parameter is in exactly one group, or the trainer refuses to start, naming the parameter: a
// parameter silently trained with the wrong weight decay is the bug this prevents.
import { GraphValidationError, type OpGraph } from "@attngraph/graph";
import type { GroupOptions, Optimizer } from "./optimizer.js";

/** Which parameters a group holds: their names, or a rule on a parameter's name and shape. */
export type ParamSelector = readonly string[] | ((name: string, shape: readonly number[]) => boolean);

export interface ParamGroup extends GroupOptions {
  readonly params: ParamSelector;
}

/**
 * nanoGPT's `configure_optimizers` rule: weight decay on every parameter of rank >= 2 (matmul weights, embeddings),
 * none on the others (biases, layer-norm gains), all else the optimizer's own options.
 */
export function nanoGPTGroups(weightDecay = 0.1): ParamGroup[] {
  return [
    { params: (_name, shape) => shape.length >= 2, weightDecay },
    { params: (_name, shape) => shape.length < 2, weightDecay: 0 },
  ];
}

/**
 * The optimizer of each trained parameter: `optimizer` with its group's options. Without groups, `optimizer` for all.
 * A parameter in no group or in two, a listed name that is not a trained parameter, or a list named twice is a
 * GraphValidationError naming it.
 */
export function groupOptimizers(
  graph: OpGraph,
  params: readonly string[],
  optimizer: Optimizer,
  groups: readonly ParamGroup[] | undefined,
): Map<string, Optimizer> {
  if (groups === undefined) return new Map(params.map((p) => [p, optimizer]));
  if (!Array.isArray(groups) || groups.length === 0)
    throw new GraphValidationError(
      "train.paramGroups",
      "no parameter groups",
      "a non-empty list of { params, …options }",
      JSON.stringify(groups),
    );
  const shapes = new Map(graph.weights.map((w) => [w.name, w.shape.map(Number)]));
  const trained = new Set(params);
  const owner = new Map<string, number>();
  groups.forEach((g, i) => {
    const field = `train.paramGroups[${i}].params`;
    const sel = g?.params;
    let members: string[];
    if (typeof sel === "function") {
      members = params.filter((p) => sel(p, shapes.get(p)!));
    } else if (Array.isArray(sel)) {
      for (const p of sel)
        if (!trained.has(p))
          throw new GraphValidationError(
            field,
            "no trained parameter of this name",
            "a weight of the graph that is trained",
            String(p),
          );
      members = sel;
    } else {
      throw new GraphValidationError(
        field,
        "a group must say which parameters it holds",
        "a list of names or (name, shape) => boolean",
        String(sel),
      );
    }
    for (const p of members) {
      const before = owner.get(p);
      if (before !== undefined)
        throw new GraphValidationError(
          `train.paramGroups.${p}`,
          "a parameter is in two groups",
          "exactly one group",
          `groups ${before} and ${i}`,
        );
      owner.set(p, i);
    }
  });
  const missing = params.filter((p) => !owner.has(p));
  if (missing.length > 0)
    throw new GraphValidationError(
      `train.paramGroups.${missing[0]}`,
      "a parameter is in no group",
      "every trained parameter in exactly one group",
      `${missing.length} without: ${missing.join(", ")}`,
    );
  const perGroup = groups.map(({ params: _p, ...options }) => optimizer.withOptions(options));
  return new Map(params.map((p) => [p, perGroup[owner.get(p)!]!]));
}
