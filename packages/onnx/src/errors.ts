import { SubjectError } from "@attngraph/tensor";

/**
 * A graph that cannot be written as ONNX: a node whose op kind has no ONNX form (a user op, a backward or optimizer op
 * without a lowering yet), a node whose attributes have none (training-mode dropout: its counter-based mask has no
 * ONNX op that draws the same bits), a missing or misshapen weight, or an argument or option of exportOnnx that is not
 * what it should be (`contrib: "bogus"`). `subject` names the node (or weight, or option), and the message says what
 * was expected and what came. `code` is always "onnx-export", so callers can tell it from a graph
 * that does not validate at all.
 */
export class OnnxExportError extends SubjectError {
  constructor(subject: string, what: string, expected?: string, got?: string) {
    super("onnx-export", subject, what, expected, got);
    this.name = "OnnxExportError";
  }
}
