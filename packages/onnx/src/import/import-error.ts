import { AttnGraphError, SubjectError } from "@attngraph/tensor";

/** One op type that importOnnx does not build: how many nodes use it and the first of their names. */
export interface UnsupportedOp {
  readonly opType: string;
  readonly domain: string;
  readonly count: number;
  readonly nodes: readonly string[];
}

/**
 * An ONNX file that importOnnx cannot turn into a graph: bytes that are not a ModelProto (truncated, malformed), a
 * tensor whose declared size disagrees with its data, external data that was not given, dims that overflow or were
 * not given, a node whose input is never defined, or a node of a supported type in a form that has no attngraph op
 * (`subject` names the field or node, the message what was expected and what came). `code` is "onnx-import".
 */
export class OnnxImportError extends SubjectError {
  constructor(subject: string, what: string, expected?: string, got?: string) {
    super("onnx-import", subject, what, expected, got);
    this.name = "OnnxImportError";
  }
}

/**
 * Op types outside the importer's set, every one at once (before anything is built): `ops` lists each type with its
 * count and first node names. `code` is "unsupported".
 */
export class OnnxUnsupportedOpsError extends AttnGraphError {
  readonly ops: readonly UnsupportedOp[];
  constructor(ops: readonly UnsupportedOp[]) {
    const list = ops.map(
      (o) =>
        `${o.domain ? `${o.domain}.` : ""}${o.opType} ×${o.count} (${o.nodes.slice(0, 3).join(", ")}${o.count > 3 ? ", …" : ""})`,
    );
    super("unsupported", `unsupported: ONNX op types this importer does not build: ${list.join("; ")}`, {
      subject: "graph.node",
      expected: "the ops torch.onnx.export writes for transformers (see @attngraph/onnx's README)",
      got: ops.map((o) => o.opType).join(", "),
    });
    this.name = "OnnxUnsupportedOpsError";
    this.ops = ops;
  }
}

/** An OnnxImportError about one node, named `node <name> (<op type>)`: how every node-level check fails. */
export function nodeError(
  node: { readonly name: string; readonly opType: string },
  what: string,
  expected?: string,
  got?: string,
): OnnxImportError {
  return new OnnxImportError(`node ${node.name} (${node.opType})`, what, expected, got);
}
