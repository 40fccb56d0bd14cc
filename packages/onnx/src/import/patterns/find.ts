// Every pattern match of a graph, without overlaps: attention chains first (they hold a scale Mul and a mask Add that
// the others must not take), then decomposed LayerNorm, GELU and SiLU (outermost product first), then Linear.
import type { GraphIndex } from "../graph-index.js";
import type { NodeIn } from "../read-model.js";
import { matchAttention } from "./attention.js";
import { matchGelu, matchSilu } from "./gelu.js";
import type { Group } from "./group.js";
import { matchLayerNorm } from "./layer-norm.js";
import { matchLinear } from "./linear.js";

type Matcher = (index: GraphIndex, n: NodeIn) => Group | undefined;

const PASSES: readonly { opType: string; match: Matcher; reverse?: boolean }[] = [
  { opType: "Softmax", match: matchAttention },
  { opType: "Div", match: matchLayerNorm },
  { opType: "Mul", match: matchGelu, reverse: true },
  { opType: "Mul", match: matchSilu, reverse: true },
  { opType: "MatMul", match: matchLinear },
];

export function findGroups(index: GraphIndex): Group[] {
  const claimed = new Set<NodeIn>();
  const groups: Group[] = [];
  for (const pass of PASSES) {
    const nodes = index.model.nodes.filter((n) => n.opType === pass.opType && n.domain === "" && !index.isStatic(n.outputs[0] ?? ""));
    for (const n of pass.reverse ? nodes.reverse() : nodes) {
      if (claimed.has(n)) continue;
      const g = pass.match(index, n);
      if (!g || claimed.has(g.terminal) || g.internal.some((m) => claimed.has(m))) continue;
      claimed.add(g.terminal);
      for (const m of g.internal) claimed.add(m);
      groups.push(g);
    }
  }
  return groups;
}
