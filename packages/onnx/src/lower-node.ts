// Lowers one graph node: looks up its op's lowering, hands it a Lowering bound to the node, and makes the value it
// returns carry the node's name (renaming the last ONNX node's output, or an Identity when the value is another one,
// e.g. eval-mode dropout returning its input).
import type { GraphNode, OpGraph } from "@attngraph/graph";
import { OnnxExportError } from "./errors.js";
import type { DimRef, Lowering } from "./lowering.js";
import { CONTRIB_DOMAIN, type ModelWriter } from "./model-writer.js";
import { LOWERINGS } from "./ops/index.js";
import { pointwiseLowering } from "./ops/pointwise.js";
import type { NodeExport } from "./report.js";
import type { RuntimeShapes } from "./runtime-shapes.js";

export interface LowerEnv {
  readonly graph: OpGraph;
  readonly writer: ModelWriter;
  readonly shapes: RuntimeShapes;
  /** The built-in op kinds (a kind outside them is a user op). */
  readonly builtin: ReadonlySet<string>;
  readonly contrib: boolean;
}

export function lowerNode(n: GraphNode, env: LowerEnv): NodeExport {
  // An op declared by its elementwise expression (silu, a user's own) exports as that expression.
  const def = env.graph.registry.has(n.kind) ? env.graph.registry.get(n.kind, n.name) : undefined;
  const lowering = Object.hasOwn(LOWERINGS, n.kind)
    ? LOWERINGS[n.kind]
    : def?.pointwise
      ? pointwiseLowering(
          def.pointwise(n.attrs as never),
          def.inputs.map((i) => i.name),
        )
      : undefined;
  if (!lowering) {
    const what = env.builtin.has(n.kind)
      ? `op ${n.kind} has no ONNX form yet`
      : `user op ${n.kind} has no ONNX form (only built-in ops export)`;
    throw new OnnxExportError(n.name, what, "a built-in forward op", n.kind);
  }
  const ops: string[] = [];
  let plainBecause: string | undefined;
  const l = bind(n, env, ops, (reason) => (plainBecause = reason));
  const result = lowering(l);
  if (result !== n.name && !env.writer.renameLastOutput(result, n.name)) {
    env.writer.emit("Identity", n.name, [result], [n.name], {}, "");
    ops.push("Identity");
  }
  const contrib = ops.some((o) => o.startsWith(`${CONTRIB_DOMAIN}.`));
  return {
    node: n.name,
    kind: n.kind,
    onnxOps: ops,
    contrib,
    ...(plainBecause && env.contrib && !contrib ? { plainBecause } : {}),
  };
}

function bind(n: GraphNode, env: LowerEnv, ops: string[], plain: (reason: string) => void): Lowering {
  const { writer, shapes, graph } = env;
  const resolve = (dim: string) => {
    const c = shapes.carrier(dim);
    if (!c)
      throw new OnnxExportError(
        n.name,
        `symbolic dim ${dim} is carried by no graph input, so the model cannot compute it`,
        "a dim of some graph input",
        dim,
      );
    return c;
  };
  const unsupported = (what: string, expected?: string, got?: string): never => {
    throw new OnnxExportError(n.name, `${n.kind}: ${what}`, expected, got);
  };
  const emitMulti: Lowering["emitMulti"] = (op, inputs, count, attrs = {}, options = {}) => {
    const domain = options.domain ?? "";
    const outputs = Array.from({ length: count }, (_, i) => writer.fresh(`${n.name}/${op}${count > 1 ? `.${i}` : ""}`));
    writer.emit(op, outputs[0]!, inputs, outputs, attrs, domain);
    ops.push(domain ? `${domain}.${op}` : op);
    return outputs;
  };
  return {
    node: n,
    input: (slot) => n.inputs[slot],
    required: (slot) => n.inputs[slot] ?? unsupported(`input ${slot} is empty`, "a value", "nothing"),
    shapeOf: (slot) => graph.shapeOf(n.inputs[slot] ?? unsupported(`input ${slot} is empty`, "a value", "nothing")),
    contrib: env.contrib,
    plainBecause: plain,
    emit: (op, inputs, attrs, options) => emitMulti(op, inputs, options?.outputs ?? 1, attrs, options)[0]!,
    emitMulti,
    constant: (type, values, dims) => writer.constant(type, values, dims),
    shape: (dims: readonly DimRef[]) => shapes.shape(dims, resolve),
    dimScalar: (dim) => shapes.scalar(dim, resolve),
    known: (dim) => shapes.known(dim),
    unsupported,
  };
}
