// Every pattern match of a graph, without overlaps. Cross-entropy first, then softmax (its guard is a Where the mask pattern must not
// take), then masks (they hold scale Muls and bias Adds), batched products (score, weighted-sum), decomposed
// LayerNorm, GELU and SiLU (outermost product first), then Linear.
import type { GraphIndex } from "../graph-index.js";
import type { NodeIn } from "../read-model.js";
import { matchCrossEntropy } from "./cross-entropy.js";
import { matchGelu, matchSilu } from "./gelu.js";
import type { Group } from "./group.js";
import { matchLayerNorm } from "./layer-norm.js";
import { matchLinear } from "./linear.js";
import { matchMask } from "./mask.js";
import { matchProduct } from "./product.js";
import { matchSoftmax } from "./softmax.js";

type Matcher = (index: GraphIndex, n: NodeIn) => Group | undefined;

const PASSES: readonly { opTypes: readonly string[]; match: Matcher; reverse?: boolean }[] = [
  // Cross-entropy first: its ignore-index Where looks like a mask to the mask pattern.
  { opTypes: ["GatherElements"], match: matchCrossEntropy },
  { opTypes: ["Softmax"], match: matchSoftmax },
  { opTypes: ["Where", "Add"], match: matchMask, reverse: true },
  // The grouped-query form (a Reshape around a MatMul) before plain MatMuls, which would take its inner MatMul.
  { opTypes: ["Reshape"], match: matchProduct },
  { opTypes: ["MatMul"], match: matchProduct },
  { opTypes: ["Div"], match: matchLayerNorm },
  { opTypes: ["Mul"], match: matchGelu, reverse: true },
  { opTypes: ["Mul"], match: matchSilu, reverse: true },
  { opTypes: ["MatMul"], match: matchLinear },
];

export function findGroups(index: GraphIndex): Group[] {
  const claimed = new Set<NodeIn>();
  const groups: Group[] = [];
  for (const pass of PASSES) {
    const nodes = index.model.nodes.filter(
      (n) => pass.opTypes.includes(n.opType) && n.domain === "" && !index.isStatic(n.outputs[0] ?? ""),
    );
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
