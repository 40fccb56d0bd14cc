// The contract between the exporter and one op's lowering (ops/<op>.ts): what a lowering may read of its node and
// what it may write into the model. A lowering emits ONNX nodes through `emit` and returns the ONNX value that holds
// the node's result; the exporter makes that value carry the node's name.
import type { GraphNode, SymShape } from "@attngraph/graph";
import type { AttrValue } from "./proto/proto.js";

/**
 * One dim of a shape the model computes at run time: a number, a symbolic dim name of the graph (bound through the
 * graph inputs that carry it), or axis `axis` of an ONNX value.
 */
export type DimRef = number | string | { readonly of: string; readonly axis: number };

/** ONNX element types a constant may have. */
export type ConstType = "float" | "double" | "int64" | "int32";

export interface EmitOptions {
  /** "com.microsoft" for an onnxruntime contrib op; the default ONNX domain otherwise. */
  readonly domain?: string;
  /** How many outputs the ONNX op has (named outputs come back in order); default 1. */
  readonly outputs?: number;
}

export interface Lowering {
  /** The node being lowered (attributes normalised, shape inferred). */
  readonly node: GraphNode;
  /** The ONNX value feeding an input slot, or undefined for an empty optional slot. */
  input(slot: string): string | undefined;
  /** The same, for a slot the op requires. */
  required(slot: string): string;
  /** The attngraph shape of a value read through a slot (symbolic dims stay names). */
  shapeOf(slot: string): SymShape;
  /** True when contrib ops may be used ("auto"); a lowering that could use one but does not says why with `plainBecause`. */
  readonly contrib: boolean;
  /** Records why this node stays plain although contrib ops are allowed (shown in the export report). */
  plainBecause(reason: string): void;
  /** Emits one ONNX node; returns its first output's name (all names with `outputs` > 1, see emitMulti). */
  emit(
    op: string,
    inputs: readonly string[],
    attrs?: Readonly<Record<string, AttrValue>>,
    options?: EmitOptions,
  ): string;
  /** Emits one ONNX node with several outputs; "" in `inputs` leaves an optional input out. */
  emitMulti(
    op: string,
    inputs: readonly string[],
    outputs: number,
    attrs?: Readonly<Record<string, AttrValue>>,
    options?: EmitOptions,
  ): string[];
  /** A constant initializer (a scalar when `dims` is []), shared by every node that asks for the same one. */
  constant(type: ConstType, values: readonly number[], dims?: readonly number[]): string;
  /** A 1-D int64 tensor with these dims, computed from the inputs' shapes where a dim is not a number. */
  shape(dims: readonly DimRef[]): string;
  /** One dim as an int64 scalar (for Range and arithmetic on lengths). */
  dimScalar(dim: DimRef): string;
  /** The dim as a number when the export knows it (a number, or a symbolic dim bound by a weight's shape). */
  known(dim: DimRef): number | undefined;
  /** Fails the export naming this node: there is no ONNX form for what it asks. */
  unsupported(what: string, expected?: string, got?: string): never;
}

/** One op kind's lowering; the table (ops/index.ts) maps op kinds to these. */
export type OpLowering = (l: Lowering) => string;
