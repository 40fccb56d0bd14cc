// Masking as exporters write it, before a Softmax: Where(hidden, fill, v) / Where(keep, v, fill) with a fill at or
// below −1e4, over v = an affine function of the scores u (Mul / Div by a constant scalar, Add of a constant or runtime
// bias, in any order the mask's `scale · u + bias` can say); or, without hiding, an Add of a bias read by a Softmax.
// `hidden` may be static (folded at import: causal, sliding-window or any 0/1 pattern) or an Or of static parts,
// IsInf(u) (already −∞ stays −∞), a key padding mask Unsqueeze(Equal(pad [B, S], 1), [1, 2]) and a user mask
// Equal(m, 0) (Unsqueeze(…, [1]) for a per-batch [B, L, S] one): attngraph's mask op with its inputs.
import type { GraphIndex } from "../graph-index.js";
import { HOST_OPS } from "../host-ops.js";
import { attrInts } from "../node-args.js";
import { formatShape, type HostTensor } from "../host-tensor.js";
import type { LowerContext } from "../lower-context.js";
import type { NodeIn } from "../read-model.js";
import { feeding, scalarProduct, splitStatic, type Group } from "./group.js";
import { expandTo4, geometryOf, keepPlane } from "./mask-geometry.js";

/** A fill at or below this hides a key (−∞, torch.finfo(float32).min, −1e9, HF's older −1e4). */
const HIDING_FILL = -1e4;

type Step =
  | { readonly node: NodeIn; readonly kind: "scale" | "divide"; readonly value: string }
  | { readonly node: NodeIn; readonly kind: "bias"; readonly value: string; readonly runtime: boolean };

type Leaf =
  | { readonly kind: "static"; readonly value: string }
  | { readonly kind: "isinf"; readonly nodes: readonly NodeIn[] }
  /** Equal(x, constant), unsqueezed or not: a key padding mask (== 1) or a user mask (== 0), told apart when built. */
  | { readonly kind: "equal"; readonly value: string; readonly equal: NodeIn; readonly nodes: readonly NodeIn[] };

/** Steps from `value` inward (outermost first) and the scores u they start from. */
function affine(index: GraphIndex, value: string, reader: NodeIn): { steps: Step[]; u: string } {
  const steps: Step[] = [];
  let cur = value;
  let by = reader;
  for (;;) {
    const mul = feeding(index, cur, "Mul", by) ?? feeding(index, cur, "Div", by);
    const ms = mul && splitStatic(index, mul);
    if (mul && ms && (mul.opType === "Mul" || mul.inputs[1] === ms.constant)) {
      steps.push({ node: mul, kind: mul.opType === "Mul" ? "scale" : "divide", value: ms.constant });
      [cur, by] = [ms.runtime, mul];
      continue;
    }
    const add = feeding(index, cur, "Add", by);
    if (add) {
      const s = splitStatic(index, add);
      // Two runtime operands: the scores come first (torch's `attn + mask`, the exporter's `values + bias`).
      const [inner, bias, runtime] = s ? [s.runtime, s.constant, false] : [add.inputs[0]!, add.inputs[1]!, true];
      steps.push({ node: add, kind: "bias", value: bias, runtime });
      [cur, by] = [inner, add];
      continue;
    }
    return { steps, u: cur };
  }
}

/** The leaves of an Or-tree of conditions read only by the mask, and the Or nodes joining them. */
function leaves(index: GraphIndex, cond: string, reader: NodeIn, u: string, ors: NodeIn[]): Leaf[] | undefined {
  if (index.isStatic(cond)) return [{ kind: "static", value: cond }];
  const or = feeding(index, cond, "Or", reader);
  if (or) {
    ors.push(or);
    const a = leaves(index, or.inputs[0]!, or, u, ors);
    const b = leaves(index, or.inputs[1]!, or, u, ors);
    return a && b ? [...a, ...b] : undefined;
  }
  const isInf = feeding(index, cond, "IsInf", reader);
  if (isInf) return isInf.inputs[0] === u ? [{ kind: "isinf", nodes: [isInf] }] : undefined;
  const unsq = feeding(index, cond, "Unsqueeze", reader);
  const eqValue = unsq ? unsq.inputs[0] : cond;
  const equal = feeding(index, eqValue, "Equal", unsq ?? reader);
  const eq = equal && splitStatic(index, equal);
  if (!equal || !eq || (unsq?.inputs[1] && !index.isStatic(unsq.inputs[1]))) return undefined;
  return [{ kind: "equal", value: eq.runtime, equal, nodes: [equal, ...(unsq ? [unsq] : [])] }];
}

export function matchMask(index: GraphIndex, n: NodeIn): Group | undefined {
  let fill: string | undefined;
  let hideWhenTrue = true;
  let steps: Step[];
  let u: string;
  let found: Leaf[] = [];
  const ors: NodeIn[] = [];
  if (n.opType === "Where") {
    const [c, a, b] = n.inputs as [string, string, string];
    if (index.isStatic(a) && !index.isStatic(b)) [fill, hideWhenTrue] = [a, true];
    else if (index.isStatic(b) && !index.isStatic(a)) [fill, hideWhenTrue] = [b, false];
    else return undefined;
    ({ steps, u } = affine(index, hideWhenTrue ? b : a, n));
    const l = leaves(index, c, n, u, ors);
    if (!l || (!hideWhenTrue && l.some((x) => x.kind !== "static"))) return undefined;
    found = l;
  } else {
    // Add of a bias, read by a Softmax alone: a mask that hides nothing.
    const uses = index.usesOf(n.outputs[0]!);
    if (index.outputs.has(n.outputs[0]!) || uses.length !== 1 || uses[0]!.node.opType !== "Softmax") return undefined;
    ({ steps, u } = affine(index, n.outputs[0]!, uses[0]!.node));
    if (!steps.some((s) => s.kind === "bias")) return undefined;
  }
  if (index.isStatic(u)) return undefined;
  const internal = [
    ...steps.map((s) => s.node),
    ...ors,
    ...found.flatMap((l) => (l.kind === "static" ? [] : l.nodes)),
  ].filter((m) => m !== n);
  return {
    kind: "mask",
    terminal: n,
    internal: [...new Set(internal)],
    lower: (ctx) => lowerMask(ctx, n, { fill, hideWhenTrue, steps, u, leaves: found }),
  };
}

interface MaskMatch {
  readonly fill: string | undefined;
  readonly hideWhenTrue: boolean;
  readonly steps: readonly Step[];
  readonly u: string;
  readonly leaves: readonly Leaf[];
}

function lowerMask(ctx: LowerContext, n: NodeIn, m: MaskMatch): boolean {
  const shape = ctx.shapeOf(m.u, n);
  if (shape.length !== 4) return false;
  const [B, H, L, S] = shape as [number, number, number, number];
  if (m.fill !== undefined && !((scalarProduct(ctx, [m.fill]) ?? 0) <= HIDING_FILL)) return false;
  // scale · u + bias, from the innermost step out.
  let scale = 1;
  let staticBias: HostTensor | undefined;
  let runtimeBias: string | undefined;
  for (const s of [...m.steps].reverse()) {
    if (s.kind === "bias") {
      if (runtimeBias !== undefined) return false;
      if (s.runtime) {
        if (staticBias) return false;
        runtimeBias = s.value;
      } else {
        const t = ctx.constOf(s.value)!;
        staticBias = staticBias ? HOST_OPS["Add"]!(s.node, [staticBias, t], 0)[0]! : t;
      }
    } else {
      const k = scalarProduct(ctx, [s.value]);
      if (k === undefined || !Number.isFinite(k) || k === 0) return false;
      const f = s.kind === "divide" ? 1 / k : k;
      if (runtimeBias !== undefined) return false;
      scale *= f;
      if (staticBias) staticBias = { ...staticBias, data: staticBias.data.map((v) => v * f) as typeof staticBias.data };
    }
  }
  // What hides: static parts (folded), key padding, a runtime user mask; IsInf(u) and the Or nodes add nothing.
  let hiddenStatic: HostTensor | undefined;
  let padding: string | undefined;
  let user: string | undefined;
  for (const leaf of m.leaves) {
    if (leaf.kind === "static") {
      const c = ctx.constOf(leaf.value)!;
      hiddenStatic = hiddenStatic ? HOST_OPS["Or"]!(n, [hiddenStatic, c], 0)[0]! : c;
    } else if (leaf.kind === "equal") {
      const eqConst = scalarProduct(ctx, [
        leaf.equal.inputs[0] === leaf.value ? leaf.equal.inputs[1]! : leaf.equal.inputs[0]!,
      ]);
      const xs = ctx.shapeOf(leaf.value, n);
      const unsq = leaf.nodes.find((x) => x.opType === "Unsqueeze");
      const axes = unsq
        ? unsq.inputs[1]
          ? Array.from(ctx.constOf(unsq.inputs[1])!.data)
          : [...(attrInts(unsq, "axes") ?? [])]
        : [];
      if (
        eqConst === 1 &&
        xs.length === 2 &&
        axes.join() === "1,2" &&
        xs[0] === B &&
        xs[1] === S &&
        padding === undefined
      )
        padding = leaf.value;
      else if (
        eqConst === 0 &&
        user === undefined &&
        ((xs.length === 3 && axes.join() === "1") || (axes.length === 0 && (xs.length === 2 || xs.length === 4)))
      )
        user = leaf.value;
      else return false;
    }
  }
  // A constant bias of 0 and −∞ only (a causal mask written as an additive one) hides: it is a 0/1 mask, whose
  // geometry the kernels can use (skipping the key blocks a causal mask hides).
  if (staticBias?.data.every((v) => v === 0 || v === -Infinity) && m.hideWhenTrue) {
    const hides: HostTensor = {
      dtype: "bool",
      shape: staticBias.shape,
      data: Float64Array.from(staticBias.data, (v) => (v === -Infinity ? 1 : 0)),
    };
    hiddenStatic = hiddenStatic ? HOST_OPS["Or"]!(n, [hiddenStatic, hides], 0)[0]! : hides;
    staticBias = undefined;
  }
  const keep = hiddenStatic ? keepPlane(hiddenStatic, m.hideWhenTrue, B, H, L, S) : undefined;
  if (hiddenStatic && !keep) return false;
  const geometry = keep ? geometryOf(keep) : undefined;
  if (keep && !geometry && user !== undefined) return false; // two 0/1 masks: attngraph's mask takes one
  let biasRef: string | undefined;
  if (staticBias) {
    const b4 = expandTo4(staticBias, B, H, L, S);
    if (!b4) return false;
    biasRef = ctx.weight(`${n.name}.bias`, b4);
  } else if (runtimeBias !== undefined) {
    // A bias that is still an expression (a score modification) is better built as one, not as a mask's bias.
    if (ctx.rawVal(runtimeBias, n).kind === "expr") return false;
    const bs = ctx.shapeOf(runtimeBias, n);
    const fits =
      (bs.length === 2 && bs[0] === L && bs[1] === S) ||
      (bs.length === 4 && (bs[0] === 1 || bs[0] === B) && (bs[1] === 1 || bs[1] === H) && bs[2] === L && bs[3] === S);
    if (!fits) return false;
    biasRef = ctx.ref(runtimeBias, n);
  }
  const inputs = {
    scores: ctx.ref(m.u, n),
    keyPaddingMask: padding && ctx.ref(padding, n),
    mask: user !== undefined ? ctx.ref(user, n) : keep && !geometry ? ctx.weight(`${n.name}.keep`, keep) : undefined,
    bias: biasRef,
  };
  const attrs = {
    causal: geometry?.causal ?? false,
    window: geometry?.window ?? null,
    alignment: geometry?.alignment ?? "top-left",
    scale,
  };
  const what = [
    geometry
      ? `causal${geometry.window ? ` window ${geometry.window}` : ""} ${geometry.alignment}`
      : keep
        ? `0/1 mask ${formatShape(keep.shape)}`
        : "",
    padding ? "key padding" : "",
    user ? "user mask" : "",
    biasRef ? "bias" : "",
  ]
    .filter(Boolean)
    .join(", ");
  ctx.addOutput(n, "mask", inputs, attrs, [n, ...m.steps.map((s) => s.node)], what || "hides nothing");
  return true;
}
