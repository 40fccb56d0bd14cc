// onnxruntime's fused attention contrib ops (what its transformer optimizer writes) as attngraph's attention chain:
// com.microsoft.Attention (input · the packed [in, 3·hidden] QKV weights + bias, heads, softmax(scale · q·kᵀ),
// causal with `unidirectional`) and com.microsoft.MultiHeadAttention (projected q, k, v [B, S, hidden] + an optional
// packed bias). Both become projection/slices, heads (reshape, transpose), score, [mask], softmax, weighted-sum and the
// heads merged again, so they fuse like any other chain. The forms beyond that (masks by index, attention_bias, past
// and present, rotary, packed q/k/v inputs) are refused by name.
import type { Ref } from "@attngraph/graph";
import { attrFloat, attrInt, attrInts } from "./node-args.js";
import { formatShape, type HostTensor } from "./host-tensor.js";
import type { LowerContext } from "./lower-context.js";
import { asVector, transposed } from "./lower-weights.js";
import type { NodeIn } from "./read-model.js";

export function lowerContribAttention(ctx: LowerContext, n: NodeIn): void {
  const heads = attrInt(n, "num_heads");
  if (n.opType === "Attention") {
    refuseInputs(ctx, n, { 3: "mask_index", 4: "past", 5: "attention_bias", 6: "past_sequence_length" });
    if (attrInt(n, "do_rotary", 0) !== 0) ctx.unsupported(n, "Attention with do_rotary");
    refuseOutputs(ctx, n, { 1: "present" });
    const x = ctx.shapeOf(n.inputs[0]!, n);
    const w = ctx.constOf(n.inputs[1]);
    if (x.length !== 3 || !w || w.shape.length !== 2)
      return ctx.unsupported(n, "Attention other than input [B, S, in] with constant weights [in, 3·hidden]");
    const sizes = attrInts(n, "qkv_hidden_sizes");
    if (sizes && !(sizes.length === 3 && sizes[0] === sizes[1] && sizes[1] === sizes[2]))
      ctx.unsupported(
        n,
        "Attention with q, k and v of different hidden sizes",
        `qkv_hidden_sizes [${sizes.join(", ")}]`,
      );
    const hidden = w.shape[1]! / 3;
    const b = n.inputs[2] ? asVector(ctx.constOf(n.inputs[2])) : undefined;
    if (n.inputs[2] && !b) ctx.unsupported(n, "Attention whose bias is not a constant [3·hidden]");
    const qkv = ctx.add(
      "projection",
      ctx.nameFor(n, n.outputs[0]!, ".qkv"),
      {
        x: ctx.ref(n.inputs[0]!, n),
        weight: ctx.weight(`${n.inputs[1]}.T`, transposed(w)),
        bias: b && ctx.weight(n.inputs[2]!, b),
      },
      {},
      [n],
    );
    const part = (i: number, what: string) =>
      ctx.add(
        "slice",
        ctx.nameFor(n, n.outputs[0]!, `.${what}`),
        { x: qkv },
        { axis: -1, start: i * hidden, size: hidden },
        [n],
      );
    return chain(
      ctx,
      n,
      heads,
      part(0, "queries"),
      part(1, "keys"),
      part(2, "values"),
      hidden,
      attrInt(n, "unidirectional", 0) === 1,
    );
  }
  // MultiHeadAttention
  refuseInputs(ctx, n, {
    4: "key_padding_mask",
    5: "attention_bias",
    6: "past_key",
    7: "past_value",
    8: "past_sequence_length",
    9: "cache_indirection",
  });
  refuseOutputs(ctx, n, { 1: "present_key", 2: "present_value", 3: "qk" });
  if (!n.inputs[1] || !n.inputs[2]) return ctx.unsupported(n, "MultiHeadAttention with packed q/k/v (query alone)");
  const shapes = [0, 1, 2].map((i) => ctx.shapeOf(n.inputs[i]!, n));
  if (shapes.some((s) => s.length !== 3))
    return ctx.unsupported(
      n,
      `MultiHeadAttention of q, k, v other than [B, S, hidden] (got ${shapes.map(formatShape).join(", ")})`,
    );
  const hidden = shapes[0]![2]!;
  if (shapes[1]![2] !== hidden || shapes[2]![2] !== hidden)
    ctx.unsupported(n, "MultiHeadAttention with a value hidden size other than the query's");
  const bias = n.inputs[3] ? asVector(ctx.constOf(n.inputs[3])) : undefined;
  if (n.inputs[3] && (!bias || bias.shape[0] !== 3 * hidden))
    ctx.unsupported(n, "MultiHeadAttention whose bias is not a constant [3·hidden]");
  const withBias = (i: number, what: string): Ref => {
    const v = ctx.ref(n.inputs[i]!, n);
    if (!bias) return v;
    const part: HostTensor = { dtype: "float32", shape: [hidden], data: bias.data.slice(i * hidden, (i + 1) * hidden) };
    return ctx.add(
      "add",
      ctx.nameFor(n, n.outputs[0]!, `.${what}`),
      { a: v, b: ctx.weight(`${n.inputs[3]}.${what}`, part) },
      {},
      [n],
    );
  };
  chain(
    ctx,
    n,
    heads,
    withBias(0, "queries"),
    withBias(1, "keys"),
    withBias(2, "values"),
    hidden,
    attrInt(n, "unidirectional", 0) === 1,
  );
}

/** q, k, v [B, L|S, hidden] → heads → score → [causal mask] → softmax → weighted-sum → [B, L, hidden]. */
function chain(
  ctx: LowerContext,
  n: NodeIn,
  heads: number,
  q: Ref,
  k: Ref,
  v: Ref,
  hidden: number,
  causal: boolean,
): void {
  if (!(heads >= 1) || hidden % heads !== 0)
    ctx.unsupported(n, `num_heads ${heads} does not divide the hidden size ${hidden}`);
  const d = hidden / heads;
  const out = n.outputs[0]!;
  const name = (s: string) => ctx.nameFor(n, out, `.${s}`);
  const split = (x: Ref, s: string) => {
    const [b, t] = ctx.b.shapeOf(x) as number[];
    return ctx.add(
      "transpose",
      name(`${s}.heads`),
      { x: ctx.add("reshape", name(`${s}.split`), { x }, { shape: [b!, t!, heads, d] }, [n]) },
      { perm: [0, 2, 1, 3] },
      [n],
    );
  };
  const scores = ctx.add("score", name("scores"), { q: split(q, "q"), k: split(k, "k") }, {}, [n]);
  // onnxruntime lines the last query up with the last key (a causal mask with past keys): attngraph's bottom-right.
  const masked = causal
    ? ctx.add(
        "mask",
        name("masked"),
        { scores },
        { causal: true, window: null, alignment: "bottom-right", scale: 1 },
        [n],
        "causal bottom-right",
      )
    : scores;
  const scale = attrFloat(n, "scale", 0) || 1 / Math.sqrt(d);
  const weights = ctx.add("softmax", name("weights"), { x: masked }, { scale }, [n]);
  const context = ctx.add("weighted-sum", name("context.heads"), { weights, v: split(v, "v") }, {}, [n]);
  const [b, , l] = ctx.b.shapeOf(context) as number[];
  const merged = ctx.add("transpose", name("context.merge"), { x: context }, { perm: [0, 2, 1, 3] }, [n]);
  ctx.setNode(out, ctx.add("reshape", ctx.nameFor(n, out), { x: merged }, { shape: [b!, l!, hidden] }, [n]));
}

function refuseInputs(ctx: LowerContext, n: NodeIn, slots: Readonly<Record<number, string>>): void {
  for (const [i, what] of Object.entries(slots))
    if (n.inputs[Number(i)]) ctx.unsupported(n, `${n.opType} with ${what} (input ${i})`);
}

function refuseOutputs(ctx: LowerContext, n: NodeIn, slots: Readonly<Record<number, string>>): void {
  for (const [i, what] of Object.entries(slots)) {
    const o = n.outputs[Number(i)];
    if (o && (ctx.index.usesOf(o).length > 0 || ctx.index.outputs.has(o)))
      ctx.unsupported(n, `${n.opType} whose ${what} output is read`);
  }
}
