// Reading an ONNX node's inputs and attributes, shared by the host ops (host-ops.ts) and the lowering (lower-ops.ts),
// with the checks that turn a bad file into a typed error: an axis out of range, or a folded result too large to hold.
import { nodeError } from "./import-error.js";
import { formatShape, sizeOf, type HostTensor } from "./host-tensor.js";
import type { NodeIn } from "./read-model.js";

export const MAX_FOLDED = 2 ** 26;

export type HostOp = (node: NodeIn, ins: readonly (HostTensor | undefined)[], opset: number) => HostTensor[];

export function fail(node: NodeIn, what: string, expected: string, got: string): never {
  throw nodeError(node, what, expected, got);
}

export function need(node: NodeIn, ins: readonly (HostTensor | undefined)[], i: number): HostTensor {
  const t = ins[i];
  if (!t) fail(node, `input ${i} is missing`, "an input", "none");
  return t;
}

export function bounded(node: NodeIn, shape: readonly number[]): number {
  for (const d of shape)
    if (!Number.isSafeInteger(d) || d < 0)
      fail(node, "a result dim is not a whole number >= 0", "dims >= 0", formatShape(shape));
  const n = sizeOf(shape);
  if (n > MAX_FOLDED)
    fail(
      node,
      "folding this node at import would make too large a tensor",
      `at most ${MAX_FOLDED} elements`,
      formatShape(shape),
    );
  return n;
}

export function attrInt(node: NodeIn, name: string, fallback?: number): number {
  const a = node.attrs.get(name);
  if (a?.i !== undefined) return a.i;
  if (fallback === undefined) fail(node, `attribute ${name} is missing`, "an integer", "none");
  return fallback;
}

export function attrInts(node: NodeIn, name: string): readonly number[] | undefined {
  return node.attrs.get(name)?.ints;
}

export function attrFloat(node: NodeIn, name: string, fallback: number): number {
  return node.attrs.get(name)?.f ?? fallback;
}

export function normAxis(node: NodeIn, axis: number, rank: number): number {
  const a = axis < 0 ? axis + rank : axis;
  if (!Number.isInteger(a) || a < 0 || a >= rank)
    fail(node, "axis out of range", `-${rank} … ${rank - 1}`, String(axis));
  return a;
}

export function ints(t: HostTensor): number[] {
  return Array.from(t.data);
}
