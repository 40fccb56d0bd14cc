// Initial weights the way PyTorch's modules make them, decided by the op each weight feeds: nn.Linear's
// U(−1/√in, 1/√in) for a projection's weight and bias, nn.LayerNorm's ones and zeros, nn.Embedding's N(0, 1), and
// N(0, 1) for a parameter added directly (the worked example's `pos_embed = nn.Parameter(torch.randn(...))`). Seeded,
// so a training run from "random" weights repeats exactly. (The numbers are not PyTorch's: its generator is another.)
import { GraphValidationError, type OpGraph } from "@attngraph/graph";
import { AttnGraphError, Tensor, mulberry32 as uniform } from "@attngraph/tensor";
import { checkGraph, kindOf } from "./args.js";

/**
 * Every weight of `graph` initialised as its PyTorch module would be, from `seed` (an integer, taken modulo 2^32); in
 * the graph's weight order.
 */
export function defaultInit(graph: OpGraph, seed = 0): Record<string, Tensor> {
  checkGraph("defaultInit graph", graph);
  // `seed >>> 0` would make "7", 1.5 and NaN seeds 7, 1 and 0 without a word: a run that is not the one asked for.
  if (!Number.isSafeInteger(seed))
    throw new GraphValidationError("defaultInit seed", "invalid seed", "an integer (taken modulo 2^32)", kindOf(seed));
  const u = uniform(seed);
  const normal = () => Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u()); // Box–Muller
  const out: Record<string, Tensor> = {};
  for (const w of graph.weights) {
    const shape = w.shape.map((d) => {
      if (typeof d !== "number")
        throw new AttnGraphError("validation", `defaultInit: weight ${w.name} has a symbolic dim ${d}`, {
          subject: w.name,
        });
      return d;
    });
    const size = shape.reduce((a, b) => a * b, 1);
    const reader = graph.consumers(w.name)[0];
    const node = reader ? graph.node(reader.node) : undefined;
    let fill: () => number;
    if (node && (node.kind === "projection" || node.kind === "out-proj" || node.kind === "linear-gelu")) {
      const fanIn = graph.shapeOf(node.inputs["weight"]!)[1] as number;
      const bound = 1 / Math.sqrt(fanIn);
      fill = () => (2 * u() - 1) * bound;
    } else if (node && (node.kind === "layer-norm" || node.kind === "add-layer-norm")) {
      const one = reader!.slot === "weight" ? 1 : 0;
      fill = () => one;
    } else {
      fill = normal; // embedding tables, parameters added directly
    }
    out[w.name] = Tensor.from(Array.from({ length: size }, fill), shape);
  }
  return out;
}
