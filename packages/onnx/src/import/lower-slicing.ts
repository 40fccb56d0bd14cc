// Lowering of the ONNX ops that take part of a value: Gather (token embedding, contiguous runs as slices, constant
// or gathered reads otherwise), Split and Slice (as attngraph slices along one axis each).
import { gather, sliceSpec, splitSizes } from "./host-shape-ops.js";
import type { HostTensor } from "./host-tensor.js";
import type { LowerContext } from "./lower-context.js";
import { attrInt, attrInts, normAxis } from "./node-args.js";
import { gatherLeaf } from "./pointwise.js";
import type { NodeIn } from "./read-model.js";

export function gatherNode(ctx: LowerContext, n: NodeIn): void {
  const out = n.outputs[0]!;
  const data = ctx.val(n.inputs[0]!, n);
  const idx = ctx.val(n.inputs[1]!, n);
  const dataShape = ctx.shapeOf(n.inputs[0]!, n);
  const axis = normAxis(n, attrInt(n, "axis", 0), dataShape.length);
  if (idx.kind === "node") {
    if (data.kind !== "const" || axis !== 0 || dataShape.length !== 2 || idx.dtype !== "int32")
      ctx.unsupported(n, "Gather by runtime indices other than token ids into a [V, E] table");
    const rows = ctx.add(
      "embedding",
      ctx.nameFor(n, out, idx.view ? ".rows" : ""),
      { ids: idx.view?.ref ?? idx.ref, weight: ctx.weight(n.inputs[0]!, data.t) },
      {},
      [n],
    );
    // Ids reshaped in the file: the rows come in the ids' own shape, then take the file's.
    return ctx.setNode(
      out,
      idx.view
        ? ctx.add("reshape", ctx.nameFor(n, out), { x: rows }, { shape: [...idx.shape, dataShape[1]!] }, [n])
        : rows,
    );
  }
  const indices = Array.from(idx.t.data, (v) => (v < 0 ? v + dataShape[axis]! : v));
  const bad = indices.findIndex((v) => !Number.isInteger(v) || v < 0 || v >= dataShape[axis]!);
  if (bad >= 0)
    ctx.fail(
      n,
      `index ${idx.t.data[bad]} is out of range for axis ${axis}`,
      `-${dataShape[axis]} … ${dataShape[axis]! - 1}`,
      String(idx.t.data[bad]),
    );
  const contiguous =
    idx.t.shape.length <= 1 &&
    indices.length > 0 &&
    indices.every((v, i) => v === indices[0]! + i) &&
    indices[0]! >= 0 &&
    indices[indices.length - 1]! < dataShape[axis]!;
  if (!contiguous) {
    if (data.kind === "const") return void ctx.env.set(out, { kind: "const", t: gather(n, data.t, idx.t, axis) });
    // A runtime table read at positions (a score modification's gathered read): an expression.
    if (dataShape.length === 1) return void ctx.env.set(out, gatherLeaf(ctx, n, data, idx.t));
    ctx.unsupported(n, "Gather of a runtime value of rank > 1 at indices that are not one contiguous run");
  }
  // A run of positions (a position-embedding table read at 0 … T−1, a head taken out of a value) is a slice: the
  // table stays a weight under its own name.
  let r = ctx.add(
    "slice",
    ctx.nameFor(n, out, idx.t.shape.length === 0 ? ".slice" : ""),
    { x: ctx.ref(n.inputs[0]!, n) },
    { axis, start: indices[0]!, size: indices.length },
    [n],
  );
  if (idx.t.shape.length === 0)
    r = ctx.add("reshape", ctx.nameFor(n, out), { x: r }, { shape: dataShape.filter((_, i) => i !== axis) }, [n]);
  ctx.setNode(out, r);
}

export function split(ctx: LowerContext, n: NodeIn): void {
  const shape = ctx.shapeOf(n.inputs[0]!, n);
  const axis = normAxis(n, attrInt(n, "axis", 0), shape.length);
  const sizesT = ctx.constOf(n.inputs[1]);
  if (n.inputs[1] && !sizesT) ctx.unsupported(n, "Split by sizes known only at run time");
  const sizes = splitSizes(n, shape[axis]!, sizesT ? Array.from(sizesT.data) : attrInts(n, "split"), n.outputs.length);
  let start = 0;
  n.outputs.forEach((o, i) => {
    const size = sizes[i]!;
    if (o)
      ctx.setNode(
        o,
        ctx.add(
          "slice",
          ctx.nameFor(n, o, n.outputs.length > 1 ? `:${i}` : ""),
          { x: ctx.ref(n.inputs[0]!, n) },
          { axis, start, size },
          [n],
        ),
      );
    start += size;
  });
}

export function sliceNode(ctx: LowerContext, n: NodeIn): void {
  const shape = ctx.shapeOf(n.inputs[0]!, n);
  const k = [1, 2, 3, 4].map((i) =>
    n.inputs[i]
      ? (ctx.constOf(n.inputs[i]) ?? ctx.unsupported(n, `Slice whose input ${i} is known only at run time`))
      : undefined,
  );
  const list = (t: HostTensor | undefined) => (t ? Array.from(t.data) : undefined);
  const spec = sliceSpec(n, shape, list(k[0])!, list(k[1])!, list(k[2]), list(k[3]));
  let r = ctx.ref(n.inputs[0]!, n);
  const narrowed = spec
    .map((s, axis) => ({ ...s, axis }))
    .filter((s, axis) => s.count !== shape[axis] || s.start !== 0);
  if (narrowed.some((s) => s.step !== 1)) ctx.unsupported(n, "Slice with a step other than 1");
  narrowed.forEach((s, i) => {
    r = ctx.add(
      "slice",
      ctx.nameFor(n, n.outputs[0]!, i < narrowed.length - 1 ? `.axis${s.axis}` : ""),
      { x: r },
      { axis: s.axis, start: s.start, size: s.count },
      [n],
    );
  });
  ctx.env.set(
    n.outputs[0]!,
    narrowed.length
      ? { kind: "node", ref: r, shape: ctx.b.shapeOf(r) as number[], dtype: ctx.b.dtypeOf(r) }
      : ctx.val(n.inputs[0]!, n),
  );
}
