// Elementwise ONNX nodes over attention scores that attngraph has no op of their own for (Tanh, Exp, Where,
// comparisons, Floor, Mod, reads of a table at positions, …) become pointwise *expressions*, the IR of score and mask
// modifications (@attngraph/graph expr/): a node's value is held symbolically (an "expr" value) while elementwise
// nodes keep extending it, and becomes a `score-mod` node (a number over [B, H, L, S], `score` being its one runtime
// tensor of that full shape) when something else reads it, or a `mask-mod` node when it decides which keys a
// Where(·, x, −∞) hides. Leaves: that tensor, other runtime tensors and constants read as gathered inputs at their
// broadcast position (b, h, q, kv, or 0 along a dim of 1), scalars as numbers, and Gather(table, constant indices) as
// a read of the table at an index that is itself read. So FlexAttention's score_mod and mask_mod, exported by
// exportOnnx or by torch.onnx.export, import as the same nodes (and fuse the same way).
import { MAX_GATHERED, type Expr, type ExprOpName, type ExprType, type Ref } from "@attngraph/graph";
import { broadcastShape } from "./broadcast-host.js";
import { attrInt } from "./node-args.js";
import { formatShape, isFloat, type HostTensor } from "./host-tensor.js";
import type { ExprVal, LowerContext, Val } from "./lower-context.js";
import type { NodeIn } from "./read-model.js";

const FLOAT32_MAX = 3.4028234663852886e38;
const VARS = ["b", "h", "q", "kv"] as const;

/** Ops that become expressions whenever one operand is runtime; the first five also have plain ops (used when no operand is an expression). */
const PLAIN = new Set(["Add", "Sub", "Mul", "Div", "Neg"]);
const UNARY: Readonly<Record<string, ExprOpName>> = {
  Neg: "neg",
  Abs: "abs",
  Exp: "exp",
  Log: "log",
  Tanh: "tanh",
  Sqrt: "sqrt",
  Sigmoid: "sigmoid",
  Floor: "floor",
  Not: "not",
};
const BINARY: Readonly<Record<string, ExprOpName>> = {
  Add: "add",
  Sub: "sub",
  Mul: "mul",
  Div: "div",
  Min: "min",
  Max: "max",
  Equal: "eq",
  Less: "lt",
  Greater: "gt",
  LessOrEqual: "le",
  GreaterOrEqual: "ge",
  And: "and",
  Or: "or",
  Xor: "ne",
};
const POINTWISE = new Set([
  ...Object.keys(UNARY),
  ...Object.keys(BINARY),
  "Where",
  "Mod",
  "Clip",
  "Cast",
  "Ceil",
  "Reciprocal",
  "Pow",
  "Identity",
  "Expand",
]);

/** Builds `n` as an expression when it is elementwise and reads an expression, or has no plain op; false otherwise. */
export function tryPointwise(ctx: LowerContext, n: NodeIn): boolean {
  if (n.domain !== "" || !POINTWISE.has(n.opType)) return false;
  const vals = n.inputs.map((v) => (v ? ctx.rawVal(v, n) : undefined));
  const anyExpr = vals.some((v) => v?.kind === "expr");
  const anyRuntime = vals.some((v) => v !== undefined && v.kind !== "const");
  if (
    !anyExpr &&
    (PLAIN.has(n.opType) ||
      n.opType === "Identity" ||
      n.opType === "Expand" ||
      (n.opType === "Cast" && !castChangesKind(ctx, n)))
  )
    return false;
  if (!anyRuntime) return false;
  if (n.opType === "Where" && maskModWhere(ctx, n)) return true;
  const e = build(ctx, n);
  ctx.env.set(n.outputs[0]!, { ...e, onnx: [...e.onnx, n], node: n });
  return true;
}

function castChangesKind(ctx: LowerContext, n: NodeIn): boolean {
  const to = attrInt(n, "to");
  const v = ctx.rawVal(n.inputs[0]!, n);
  const float = to === 1 || to === 10 || to === 11;
  return !(v.kind === "node" && ((float && v.dtype === "float32") || ((to === 6 || to === 7) && v.dtype === "int32")));
}

/** Where(keep, x, −∞) / Where(hide, −∞, x) over runtime scores x [B, H, L, S] with an expression condition: mask-mod. */
function maskModWhere(ctx: LowerContext, n: NodeIn): boolean {
  const [c, a, b] = n.inputs as [string, string, string];
  const va = ctx.rawVal(a, n);
  const vb = ctx.rawVal(b, n);
  const isMinusInf = (v: Val) => v.kind === "const" && v.t.data.length === 1 && v.t.data[0] === -Infinity;
  const [x, hideWhenTrue] =
    isMinusInf(vb) && va.kind === "node"
      ? [va, false]
      : isMinusInf(va) && vb.kind === "node"
        ? [vb, true]
        : [undefined, false];
  if (x?.shape.length !== 4) return false;
  const cond = leaf(ctx, c, n);
  if (
    cond.type !== "bool" ||
    cond.leaves.size === 0 ||
    broadcastShape(cond.shape, x.shape, n.name).join() !== x.shape.join()
  )
    return false;
  const keep: Expr = hideWhenTrue ? { op: "not", args: [cond.expr] } : cond.expr;
  const { expr, slots, inputs } = slotted(ctx, n, keep, cond.leaves, undefined);
  const r = ctx.add(
    "mask-mod",
    ctx.nameFor(n, n.outputs[0]!),
    { x: x.ref, ...slots },
    { expr, inputs },
    [...cond.onnx, n],
    "a mask modification read from the ONNX nodes",
  );
  ctx.setNode(n.outputs[0]!, r);
  return true;
}

function build(ctx: LowerContext, n: NodeIn): ExprVal {
  const args = n.inputs.filter(Boolean).map((v) => leaf(ctx, v, n));
  const op = n.opType;
  if (UNARY[op])
    return unary(
      UNARY[op]!,
      args[0]!,
      op === "Not" ? "bool" : op === "Floor" ? "int" : op === "Neg" || op === "Abs" ? args[0]!.type : "num",
    );
  if (BINARY[op]) {
    const name = BINARY[op]!;
    const bool = ["eq", "lt", "gt", "le", "ge", "and", "or", "ne"].includes(name);
    const type: ExprType = bool ? "bool" : name === "div" ? "num" : args.every((a) => a.type === "int") ? "int" : "num";
    return args.slice(1).reduce((acc, a) => call(name, [acc, a], type, n), args[0]!);
  }
  switch (op) {
    case "Identity":
      return args[0]!;
    case "Expand": {
      const target = ctx.constOf(n.inputs[1]);
      if (!target) return ctx.unsupported(n, "Expand to a shape known only at run time");
      return { ...args[0]!, shape: broadcastShape(args[0]!.shape, Array.from(target.data), n.name) };
    }
    case "Ceil":
      return unary("neg", unary("floor", unary("neg", args[0]!, "num"), "int"), "int");
    case "Reciprocal":
      return call("div", [number(1), args[0]!], "num", n);
    case "Pow": {
      const k = ctx.constOf(n.inputs[1]);
      const p = k && k.data.length === 1 ? k.data[0] : undefined;
      if (p === 2) return call("mul", [args[0]!, args[0]!], args[0]!.type, n);
      if (p === 0.5) return unary("sqrt", args[0]!, "num");
      if (p === 1) return args[0]!;
      return ctx.unsupported(n, "Pow of a runtime value other than x², √x or x¹");
    }
    case "Where": {
      const type: ExprType = args[1]!.type === args[2]!.type ? args[1]!.type : "num";
      return call("where", args, type, n);
    }
    case "Clip": {
      let x = args[0]!;
      if (args[1]) x = call("max", [x, args[1]], x.type === "int" && args[1].type === "int" ? "int" : "num", n);
      if (args[2]) x = call("min", [x, args[2]], x.type === "int" && args[2].type === "int" ? "int" : "num", n);
      return x;
    }
    case "Mod": {
      const [a, b] = args as [ExprVal, ExprVal];
      const type: ExprType = a.type === "int" && b.type === "int" ? "int" : "num";
      if (attrInt(n, "fmod", 0) === 0) return call("mod", [a, b], type, n);
      // C's fmod (the dividend's sign): a − b · trunc(a / b).
      return call("sub", [a, call("mul", [b, trunc(call("div", [a, b], "num", n), n)], type, n)], type, n);
    }
    case "Cast": {
      const to = attrInt(n, "to");
      const x = args[0]!;
      if (to === 9) return x.type === "bool" ? x : call("ne", [x, number(0)], "bool", n);
      if (to === 1 || to === 10 || to === 11)
        return x.type === "bool" ? call("where", [x, number(1), number(0)], "int", n) : x;
      if (to === 6 || to === 7)
        return x.type === "num"
          ? trunc(x, n)
          : x.type === "bool"
            ? call("where", [x, number(1), number(0)], "int", n)
            : x;
      return ctx.unsupported(n, `Cast of a runtime value to type ${to} inside an expression`);
    }
  }
  return ctx.unsupported(n, `${op} of a runtime value`);
}

/** trunc(z) = floor(z) for z >= 0, −floor(−z) below. */
function trunc(z: ExprVal, n: NodeIn): ExprVal {
  const neg = unary("neg", unary("floor", unary("neg", z, "num"), "int"), "int");
  return call("where", [call("lt", [z, number(0)], "bool", n), neg, unary("floor", z, "int")], "int", n);
}

function number(v: number): ExprVal {
  return {
    kind: "expr",
    expr: v,
    type: Number.isInteger(v) ? "int" : "num",
    shape: [],
    leaves: new Map(),
    onnx: [],
    node: undefined,
  };
}

function unary(op: ExprOpName, a: ExprVal, type: ExprType): ExprVal {
  return { ...a, expr: { op, args: [a.expr] }, type };
}

function call(op: ExprOpName, args: readonly ExprVal[], type: ExprType, n: NodeIn): ExprVal {
  const leaves = new Map(args.flatMap((a) => [...a.leaves]));
  const shape = args.reduce<number[]>((s, a) => broadcastShape(s, a.shape, `node ${n.name} (${n.opType})`), []);
  return {
    kind: "expr",
    expr: { op, args: args.map((a) => a.expr) },
    type,
    shape,
    leaves,
    onnx: args.flatMap((a) => a.onnx),
    node: n,
  };
}

/** The index that reads a tensor of `shape` broadcast against [B, H, L, S]: a position variable, or 0 along a dim of 1. */
function broadcastIndex(shape: readonly number[], n: NodeIn, ctx: LowerContext): Expr[] {
  if (shape.length > 4) ctx.unsupported(n, `an operand of rank ${shape.length} in an expression over [B, H, L, S]`);
  return shape.map((d, i) => (d === 1 ? 0 : VARS[4 - shape.length + i]!));
}

/** An operand as an expression: a number, a read of a constant or runtime tensor, or the expression it already is. */
export function leaf(ctx: LowerContext, name: string, n: NodeIn): ExprVal {
  const v = ctx.rawVal(name, n);
  if (v.kind === "expr") return v;
  if (v.kind === "const") return constLeaf(ctx, name, v.t, n);
  const key = `leaf:${v.ref}`;
  const type: ExprType = v.dtype === "int32" ? "int" : "num";
  return {
    kind: "expr",
    expr: { op: "input", name: key, index: broadcastIndex(v.shape, n, ctx) },
    type,
    shape: [...v.shape],
    leaves: new Map([[key, { ref: v.ref, shape: v.shape }]]),
    onnx: [],
    node: undefined,
  };
}

function constLeaf(ctx: LowerContext, name: string, t: HostTensor, n: NodeIn): ExprVal {
  const bool = t.dtype === "bool";
  const type: ExprType = bool ? "bool" : isFloat(t.dtype) ? "num" : "int";
  if (t.data.length === 1) {
    const x = t.data[0]!;
    if (bool) return { ...number(0), expr: { op: "eq", args: [0, x ? 0 : 1] }, type: "bool", shape: [...t.shape] };
    if (!Number.isFinite(x) || Math.abs(x) > FLOAT32_MAX)
      ctx.unsupported(n, `the constant ${x} in an expression (expressions hold finite float32 numbers)`);
    return { ...number(x), shape: [...t.shape] };
  }
  // Gathered inputs are float32 (the expression ops read numbers); integers up to 2^24 are exact there.
  if (!isFloat(t.dtype) && t.data.some((v) => Math.abs(v) > 2 ** 24))
    ctx.unsupported(n, "an integer constant beyond 2^24 read inside an expression");
  const ref = ctx.weight(
    isFloat(t.dtype) ? name : `${name}.float`,
    isFloat(t.dtype) ? t : { dtype: "float32", shape: t.shape, data: Float32Array.from(t.data) },
  );
  const key = `leaf:${ref}`;
  let expr: Expr = { op: "input", name: key, index: broadcastIndex(t.shape, n, ctx) };
  if (bool) expr = { op: "ne", args: [expr, 0] };
  return {
    kind: "expr",
    expr,
    type,
    shape: [...t.shape],
    leaves: new Map([[key, { ref, shape: t.shape }]]),
    onnx: [],
    node: undefined,
  };
}

/** A read of a rank-1 runtime table at constant indices (the exporter's flattened gathered read): an expression. */
export function gatherLeaf(ctx: LowerContext, n: NodeIn, table: Val & { kind: "node" }, indices: HostTensor): ExprVal {
  const idx = constLeaf(ctx, `${n.name}.indices`, indices, n);
  const key = `leaf:${table.ref}`;
  const expr: Expr = { op: "input", name: key, index: [idx.expr] };
  const leaves = new Map([...idx.leaves, [key, { ref: table.ref, shape: table.shape }]]);
  return {
    kind: "expr",
    expr,
    type: table.dtype === "int32" ? "int" : "num",
    shape: [...indices.shape],
    leaves,
    onnx: [n],
    node: n,
  };
}

/** Renames leaf reads to gathered slots g0…; with `score`, reads of that tensor at the full index become `score`. */
function slotted(
  ctx: LowerContext,
  n: NodeIn,
  expr: Expr,
  leaves: ReadonlyMap<string, { ref: Ref; shape: readonly number[] }>,
  score: string | undefined,
) {
  const names = new Map<string, string>();
  const rewrite = (e: Expr): Expr => {
    if (typeof e !== "object") return e;
    if (e.op === "input") {
      if (e.name === score && e.index.length === 4 && e.index.every((x, i) => x === VARS[i])) return "score";
      if (!names.has(e.name)) names.set(e.name, `g${names.size}`);
      return { op: "input", name: names.get(e.name)!, index: e.index.map(rewrite) };
    }
    return { op: e.op, args: e.args.map(rewrite) };
  };
  const out = rewrite(expr);
  if (names.size > MAX_GATHERED)
    ctx.unsupported(n, `an expression reading ${names.size} tensors (at most ${MAX_GATHERED})`);
  const slots: Record<string, Ref> = {};
  const inputs: string[] = [];
  for (const [key, slot] of names) {
    slots[slot] = leaves.get(key)!.ref;
    inputs.push(slot);
  }
  return { expr: out, slots, inputs };
}

/** An expression value read by a node that is not elementwise: a score-mod node (its full-shape runtime leaf is x). */
export function materialize(ctx: LowerContext, name: string, e: ExprVal, reader: NodeIn): Ref {
  const at = e.node ?? reader;
  if (e.type === "bool")
    ctx.unsupported(at, "a true/false value read outside a mask (attngraph holds them only inside expressions)");
  if (e.shape.length !== 4)
    ctx.unsupported(
      at,
      `an elementwise value of shape ${formatShape(e.shape)} that attngraph has no op for (expressions run over [B, H, L, S])`,
    );
  const x = [...e.leaves].find(([, l]) => l.shape.join() === e.shape.join());
  if (!x)
    ctx.unsupported(
      at,
      `an elementwise value over ${formatShape(e.shape)} that reads no runtime tensor of that shape (a score modification needs its scores)`,
    );
  const { expr, slots, inputs } = slotted(ctx, at, e.expr, e.leaves, x[0]);
  const r = ctx.add(
    "score-mod",
    ctx.nameFor(at, name),
    { x: x[1].ref, ...slots },
    { scale: 1, expr, inputs },
    e.onnx,
    "a score modification read from the ONNX nodes",
  );
  ctx.setNode(name, r);
  return r;
}
