// Batched products of two runtime values [B, H, L, K] · [B, Hkv, K, N] → [B, H, L, N], in the two forms exporters
// write: one MatMul (H = Hkv), or the grouped-query form that shares each key/value head with a group of query heads
// through MatMul's broadcasting: Reshape(MatMul(Reshape(left → [B, Hkv, G, L, K]), Unsqueeze(right, 2)) → [B, H, L, N]).
// With kᵀ made by a Transpose the product is attngraph's `score` (the Transpose undone), otherwise `weighted-sum`.
import type { Ref } from "@attngraph/graph";
import type { GraphIndex } from "../graph-index.js";
import { reshapeTarget } from "../host-shape-ops.js";
import { attrInts } from "../node-args.js";
import type { LowerContext } from "../lower-context.js";
import type { NodeIn } from "../read-model.js";
import { feeding, type Group } from "./group.js";

interface Product {
  readonly left: string;
  readonly right: string;
  /** The grouped form's inner nodes (Reshape, Unsqueeze, MatMul), outermost Reshape excluded. */
  readonly inner: readonly NodeIn[];
  readonly grouped: { readonly reshapeIn: NodeIn; readonly matmul: NodeIn } | undefined;
}

function productAt(index: GraphIndex, n: NodeIn): Product | undefined {
  if (n.domain !== "") return undefined;
  if (n.opType === "MatMul") {
    const [a, b] = n.inputs as [string, string];
    if (index.isStatic(a) || index.isStatic(b)) return undefined;
    return { left: a, right: b, inner: [], grouped: undefined };
  }
  if (n.opType !== "Reshape" || !index.isStatic(n.inputs[1] ?? "")) return undefined;
  const matmul = feeding(index, n.inputs[0], "MatMul", n);
  const reshapeIn = matmul && feeding(index, matmul.inputs[0], "Reshape", matmul);
  const unsqueeze = matmul && feeding(index, matmul.inputs[1], "Unsqueeze", matmul);
  if (
    !matmul ||
    !reshapeIn ||
    !unsqueeze ||
    !index.isStatic(reshapeIn.inputs[1] ?? "") ||
    !index.isStatic(unsqueeze.inputs[1] ?? "")
  )
    return undefined;
  return {
    left: reshapeIn.inputs[0]!,
    right: unsqueeze.inputs[0]!,
    inner: [matmul, reshapeIn, unsqueeze],
    grouped: { reshapeIn, matmul },
  };
}

export function matchProduct(index: GraphIndex, n: NodeIn): Group | undefined {
  const p = productAt(index, n);
  if (!p || index.isStatic(p.left) || index.isStatic(p.right)) return undefined;
  const reader = p.grouped ? p.inner.find((m) => m.opType === "Unsqueeze")! : n;
  // q · kᵀ or weights · v: both may read a Transpose. A product of a softmax's output is the weighted sum; one whose
  // value flows into a Softmax (through scales, masks, biases) is the score; otherwise a Transpose of the last two
  // axes says kᵀ.
  const transpose = feeding(index, p.right, "Transpose", reader);
  const perm = transpose && attrInts(transpose, "perm");
  const swapsLastTwo =
    perm !== undefined && perm.length === 4 && perm[0] === 0 && perm[1] === 1 && perm[2] === 3 && perm[3] === 2;
  const isScore = !fromSoftmax(index, p.left) && (feedsSoftmax(index, n.outputs[0]!) || swapsLastTwo);
  const kTranspose = isScore ? transpose : undefined;
  return {
    kind: isScore ? "score" : "weighted-sum",
    terminal: n,
    internal: [...p.inner, ...(kTranspose ? [kTranspose] : [])],
    lower: (ctx) => {
      const left = ctx.shapeOf(p.left, n);
      const right = kTranspose
        ? permuted(ctx.shapeOf(kTranspose.inputs[0]!, kTranspose), attrInts(kTranspose, "perm"))
        : ctx.shapeOf(p.right, n);
      if (left.length !== 4 || right.length !== 4 || left[0] !== right[0] || left[3] !== right[2]) return false;
      if (p.grouped && !groupedShapesFit(ctx, n, p, left, right)) return false;
      if (!p.grouped && left[1] !== right[1]) return false;
      const name = ctx.nameFor(n, n.outputs[0]!);
      const onnx = [n, ...p.inner];
      let r: Ref;
      if (isScore) {
        const k = kTranspose
          ? keysOf(ctx, kTranspose)
          : ctx.add(
              "transpose",
              ctx.nameFor(n, n.outputs[0]!, ".keys"),
              { x: ctx.ref(p.right, n) },
              { perm: [0, 1, 3, 2] },
              [n],
              "keys in [B, H, S, D] from kᵀ",
            );
        r = ctx.add("score", name, { q: ctx.ref(p.left, n), k }, {}, [...onnx, ...(kTranspose ? [kTranspose] : [])]);
      } else
        r = ctx.add(
          "weighted-sum",
          name,
          { weights: ctx.ref(p.left, n), v: ctx.ref(p.right, n) },
          {},
          onnx,
          p.grouped ? "a grouped batched MatMul" : "a batched MatMul",
        );
      ctx.setNode(n.outputs[0]!, r);
      return true;
    },
  };
}

/** The grouped form's reshapes are exactly [B, Hkv, H/Hkv, L, K] and [B, H, L, N]. */
function groupedShapesFit(
  ctx: LowerContext,
  n: NodeIn,
  p: Product,
  left: readonly number[],
  right: readonly number[],
): boolean {
  const [b, h, l, k] = left as [number, number, number, number];
  const [, hkv, , nn] = right as [number, number, number, number];
  if (hkv === 0 || h % hkv !== 0) return false;
  const t1 = ctx.constOf(p.grouped!.reshapeIn.inputs[1]);
  const t2 = ctx.constOf(n.inputs[1]);
  if (!t1 || !t2) return false;
  const s1 = reshapeTarget(p.grouped!.reshapeIn, left, Array.from(t1.data), false);
  const s2 = reshapeTarget(n, [b, hkv, h / hkv, l, nn], Array.from(t2.data), false);
  return s1.join() === [b, hkv, h / hkv, l, k].join() && s2.join() === [b, h, l, nn].join();
}

/** k [B, Hkv, S, D] from the Transpose that made kᵀ: its input, transposed again unless the Transpose only swapped the last two axes. */
function keysOf(ctx: LowerContext, t: NodeIn): Ref {
  const rank = ctx.shapeOf(t.inputs[0]!, t).length;
  const perm = [...(attrInts(t, "perm") ?? Array.from({ length: rank }, (_, i) => rank - 1 - i))];
  [perm[2], perm[3]] = [perm[3]!, perm[2]!];
  const source = ctx.ref(t.inputs[0]!, t);
  if (perm.every((p, i) => p === i)) return source;
  return ctx.add(
    "transpose",
    ctx.nameFor(t, t.outputs[0]!, ".keys"),
    { x: source },
    { perm },
    [t],
    "keys in [B, H, S, D] (the ONNX node made kᵀ)",
  );
}

function permuted(shape: readonly number[], perm: readonly number[] | undefined): number[] {
  return (perm ?? shape.map((_, i) => shape.length - 1 - i)).map((p) => shape[p]!);
}

/** `value` is a Softmax's output (or attngraph's guarded Softmax, Where(IsInf(x), 0, Softmax(…))). */
function fromSoftmax(index: GraphIndex, value: string): boolean {
  const p = index.producer.get(value);
  if (!p) return false;
  if (p.opType === "Softmax") return true;
  return p.opType === "Where" && index.producer.get(p.inputs[2] ?? "")?.opType === "Softmax";
}

/** `value` reaches a Softmax through single-reader Mul, Div, Add and Where nodes (scale, bias, mask). */
function feedsSoftmax(index: GraphIndex, value: string): boolean {
  let cur = value;
  for (let depth = 0; depth < 8; depth++) {
    const uses = index.usesOf(cur);
    if (uses.length === 0) return false;
    // IsInf readers of a mask's input (attngraph's −∞ guards) do not count as other readers.
    const onward = uses.filter((u) => u.node.opType !== "IsInf");
    if (onward.length !== 1) return false;
    const next = onward[0]!.node;
    if (next.opType === "Softmax") return true;
    if (!["Mul", "Div", "Add", "Where"].includes(next.opType)) return false;
    cur = next.outputs[0]!;
  }
  return false;
}
