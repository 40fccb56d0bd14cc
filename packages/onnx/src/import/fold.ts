// A static node (graph-index.ts) computed on the host at import: its outputs become host tensors, no graph node.
import { HOST_OPS } from "./host-ops.js";
import { hostTensor, type HostTensor } from "./host-tensor.js";
import type { LowerContext } from "./lower-context.js";
import type { NodeIn } from "./read-model.js";

export function foldNode(ctx: LowerContext, n: NodeIn): void {
  const results = compute(ctx, n);
  n.outputs.forEach((o, i) => {
    if (!o) return;
    const t = results[i];
    if (!t) ctx.fail(n, `output ${i} is not computed`, `${n.outputs.length} outputs`, `${results.length}`);
    ctx.env.set(o, { kind: "const", t });
  });
}

function compute(ctx: LowerContext, n: NodeIn): HostTensor[] {
  if (n.opType === "Constant") return [constantValue(ctx, n)];
  if (n.opType === "Shape" || n.opType === "Size") {
    const shape = ctx.shapeOf(n.inputs[0]!, n);
    if (n.opType === "Size") return [hostTensor("int64", [], [shape.reduce((a, d) => a * d, 1)])];
    const r = shape.length;
    const clampAxis = (v: number) => Math.min(Math.max(v < 0 ? v + r : v, 0), r);
    const start = clampAxis(n.attrs.get("start")?.i ?? 0);
    const end = clampAxis(n.attrs.get("end")?.i ?? r);
    const dims = shape.slice(start, Math.max(start, end));
    return [hostTensor("int64", [dims.length], dims)];
  }
  const ins = n.inputs.map((v) =>
    v
      ? (ctx.constOf(v) ?? ctx.fail(n, `input ${v} is not known at import`, "a constant", "a runtime value"))
      : undefined,
  );
  return HOST_OPS[n.opType]!(n, ins, 0);
}

function constantValue(ctx: LowerContext, n: NodeIn): HostTensor {
  const a = (name: string) => n.attrs.get(name);
  const t = a("value")?.t;
  if (t) return t;
  const f = a("value_float")?.f;
  if (f !== undefined) return hostTensor("float32", [], [f]);
  const i = a("value_int")?.i;
  if (i !== undefined) return hostTensor("int64", [], [i]);
  const fs = a("value_floats")?.floats;
  if (fs) return hostTensor("float32", [fs.length], fs);
  const is = a("value_ints")?.ints;
  if (is) return hostTensor("int64", [is.length], is);
  return ctx.fail(
    n,
    "a Constant without a value the importer reads",
    "value, value_float(s) or value_int(s)",
    [...n.attrs.keys()].join(", ") || "no attribute",
  );
}
