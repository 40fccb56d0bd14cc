// The attngraph graphs of `--problem flex`, built the way a user builds each variant:
//  - layer: buildAttention's own options where it has one (causal; ALiBi by `position`; a 0/1 `userMask`; a sliding
//    `window`), as the default problem does; softcap and document have no layer option, so their layer is the flex
//    core (addFlexAttention) between the same projections, heads split and merged as buildAttention does.
//  - core: flexAttention with the variant's expressions (q, k, v in heads layout); `causal-builtin` is the built-in
//    path score → mask{causal} → softmax → weighted-sum, the chain the scheduler fuses into one attention step.
// Nothing here chooses fused or unfused: the plan decides, and the bench measures whatever it does.
import { addFlexAttention, buildAttention, flexAttention, type AttentionConfigInput } from "@attngraph/attention";
import { GraphBuilder, type OpGraph, type Ref, type SymShape } from "@attngraph/graph";
import { benchConfig } from "../impls/attngraph.js";
import type { FlexProblem } from "./problem.js";
import { alibiSlopes, flexMods, type FlexMods, type FlexPart, type FlexVariant } from "./variants.js";

/** Symbolic shapes of the gathered inputs (bound by the run's q/x: L and S are T). */
const GATHERED_SHAPES: Record<FlexMods["gathered"][number], (h: number, part: FlexPart) => SymShape> = {
  slopes: (h) => [h],
  mask: (_, part) => (part === "core" ? ["L", "S"] : ["T", "T"]),
  doc: (_, part) => (part === "core" ? ["B", "L"] : ["B", "T"]),
};

/** The variant's graph for one part; the names of its gathered inputs are the expressions' (slopes, mask, doc). */
export function flexGraph(p: FlexProblem, variant: FlexVariant, part: FlexPart): OpGraph {
  return part === "core" ? coreGraph(p, variant) : layerGraph(p, variant);
}

function coreGraph(p: FlexProblem, variant: FlexVariant): OpGraph {
  const { h, d } = p.shape;
  const D = d / h;
  if (variant === "causal-builtin") {
    const b = new GraphBuilder();
    const q = b.input("q", ["B", h, "L", D]);
    const k = b.input("k", ["B", h, "S", D]);
    const v = b.input("v", ["B", h, "S", D]);
    const scores = b.add("score", "scores", { q, k });
    const masked = b.add("mask", "masked", { scores }, { causal: true, window: null, alignment: "top-left", scale: 1 });
    const weights = b.add("softmax", "weights", { x: masked }, { scale: p.scale });
    return b.output(b.add("weighted-sum", "output", { weights, v })).build();
  }
  const mods = flexMods(variant, p.constants);
  const gathered = Object.fromEntries(mods.gathered.map((n) => [n, GATHERED_SHAPES[n](h, "core")]));
  return flexAttention({
    numHeads: h,
    headDim: D,
    scale: p.scale,
    scoreMod: mods.scoreMod,
    maskMod: mods.maskMod,
    gathered,
  });
}

function layerGraph(p: FlexProblem, variant: FlexVariant): OpGraph {
  const config: AttentionConfigInput = benchConfig(p.layer); // causal, out_proj with bias, no Q/K/V bias
  switch (variant) {
    case "causal":
    case "causal-builtin":
      return buildAttention(config);
    case "alibi":
      return buildAttention(config, { position: { kind: "alibi", slopes: alibiSlopes(p.shape.h) } });
    case "user-mask":
      return buildAttention(config, { userMask: "mask" });
    case "window":
      return buildAttention({ ...config, window: p.constants.window });
    default:
      return flexLayer(p, flexMods(variant, p.constants));
  }
}

/**
 * x [B, T, d] → Q, K, V projections (no bias) → heads [B, H, T, D] → the flex core → heads merged → out_proj with
 * bias: buildAttention's layer with its score/mask/softmax/weighted-sum replaced by addFlexAttention, and its weight
 * names (W_query, W_key, W_value, out_proj, out_bias), so the default problem's weights load as they are.
 */
function flexLayer(p: FlexProblem, mods: FlexMods): OpGraph {
  const { d, h } = p.shape;
  const D = d / h;
  const b = new GraphBuilder();
  const x = b.input("x", ["B", "T", d]);
  const [batch, len] = b.shapeOf(x) as [SymShape[number], SymShape[number]];
  const gathered: Record<string, Ref> = Object.fromEntries(
    mods.gathered.map((n) => [n, b.input(n, GATHERED_SHAPES[n](h, "layer"))]),
  );
  const heads = (n: string, weight: string) => {
    const proj = b.add("projection", n === "q" ? "queries" : n === "k" ? "keys" : "values", {
      x,
      weight: b.weight(weight, [d, d]),
    });
    return b.add(
      "transpose",
      `${n}.heads`,
      { x: b.add("reshape", `${n}.split`, { x: proj }, { shape: [batch, len, h, D] }) },
      { perm: [0, 2, 1, 3] },
    );
  };
  const q = heads("q", "W_query");
  const k = heads("k", "W_key");
  const v = heads("v", "W_value");
  const core = addFlexAttention(
    b,
    { q, k, v, gathered },
    { scale: p.scale, scoreMod: mods.scoreMod, maskMod: mods.maskMod },
    { outputName: "context.heads" },
  );
  const merged = b.add("transpose", "context.merge", { x: core.output }, { perm: [0, 2, 1, 3] });
  const context = b.add("reshape", "context", { x: merged }, { shape: [batch, len, d] });
  return b
    .output(
      b.add("out-proj", "output", {
        x: context,
        weight: b.weight("out_proj", [d, d]),
        bias: b.weight("out_bias", [d]),
      }),
    )
    .build();
}

/** The names and shapes of a variant's gathered inputs in one part's graph (what a run feeds besides x or q, k, v). */
export function flexGatheredNames(variant: FlexVariant, part: FlexPart, p: FlexProblem): FlexMods["gathered"] {
  if (variant === "causal-builtin" || variant === "causal" || variant === "window") return [];
  if (part === "layer" && variant === "alibi") return []; // the layer's alibi node carries its slopes as attributes
  return flexMods(variant, p.constants).gathered;
}
