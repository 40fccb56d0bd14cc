// Shared by the graph package's tests (kept out of src/ so it is neither built nor collected as a test file).
import { AttnGraphError } from "@attngraph/tensor";
import { expect } from "vitest";
import { GraphBuilder, type Ref } from "../src/builder.js";
import { GraphFormatError, GraphValidationError } from "../src/errors.js";
import type { OpGraph } from "../src/graph.js";
import { defineOp } from "../src/op-def.js";

/** Standard causal multi-head attention, E = 8, H = 2 heads of D = 4, with the project's node names. */
export function standardAttention(b = new GraphBuilder()): { b: GraphBuilder; graph: OpGraph } {
  const x = b.input("x", ["B", "T", 8]);
  const heads = (name: string, w: string): Ref => {
    const p = b.add("projection", name, { x, weight: b.weight(w, [8, 8]) }); // [B, T, E]
    const split = b.add("reshape", `${name}.split`, { x: p }, { shape: ["B", "T", 2, 4] }); // [B, L, H, D]
    return b.add("transpose", `${name}.heads`, { x: split }, { perm: [0, 2, 1, 3] }); // [B, H, L, D]
  };
  const q = heads("queries", "W_query");
  const k = heads("keys", "W_key");
  const v = heads("values", "W_value");
  const scores = b.add("score", "scores", { q, k }); // [B, H, L, S]
  const masked = b.add("mask", "masked", { scores }, { causal: true });
  const probs = b.add("softmax", "softmax", { x: masked }, { scale: 0.5 });
  const weights = b.add("dropout", "weights", { x: probs }, { rate: 0.1, seed: 7 });
  const ctx = b.add("weighted-sum", "context.heads", { weights, v }); // [B, H, L, D]
  const merged = b.add("transpose", "context.merge", { x: ctx }, { perm: [0, 2, 1, 3] }); // [B, L, H, D]
  const context = b.add("reshape", "context", { x: merged }, { shape: ["B", "T", 8] }); // [B, L, E]
  const out = b.add("out-proj", "output", {
    x: context,
    weight: b.weight("W_out", [8, 8]),
    bias: b.weight("b_out", [8]),
  });
  return { b, graph: b.output(out).build() };
}

/** A builder for a norm's rules: x [B, T, 8], a weight w [8] that fits and one bad [7] that does not. */
export function normBuilder(): GraphBuilder {
  const b = new GraphBuilder();
  b.input("x", ["B", "T", 8]);
  b.weight("w", [8]);
  b.weight("bad", [7]);
  return b;
}

/** Runs fn and returns the error of class `cls` it throws (failing the test when it throws nothing or something else). */
function thrownError<E extends Error>(cls: new (...args: never[]) => E, fn: () => unknown): E {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(cls);
    expect(AttnGraphError.isInstance(e)).toBe(true);
    return e as E;
  }
  throw new Error(`expected a ${cls.name}, nothing was thrown`);
}

/** Runs fn and returns the GraphValidationError it throws. */
export function validationError(fn: () => unknown): GraphValidationError {
  return thrownError(GraphValidationError, fn);
}

/** Runs fn and returns the GraphFormatError it throws. */
export function formatError(fn: () => unknown): GraphFormatError {
  return thrownError(GraphFormatError, fn);
}

/** A small valid document to break in one place at a time. */
export function jsonDoc(): any {
  return {
    format: "attngraph.graph",
    version: 1,
    inputs: [{ name: "x", shape: ["B", "T", 8] }],
    weights: [{ name: "W", shape: [8, 8] }],
    nodes: [
      { name: "q", kind: "projection", inputs: { x: "x", weight: "W" }, attrs: {} },
      { name: "s", kind: "softmax", inputs: { x: "q" }, attrs: { scale: 0.5 } },
    ],
    outputs: ["s"],
  };
}

/**
 * A user op whose optional second slot and one attribute are both called `name`: names such as "valueOf" or
 * "__proto__" must not reach Object.prototype anywhere (building, validating, JSON).
 */
export function namedSlotOp(name: string) {
  return defineOp<Record<string, number>>({
    kind: "named",
    doc: "x, plus an optional second input",
    inputs: [{ name: "x" }, { name, optional: true }],
    attrs: { [name]: { type: "number", default: 2 } },
    inferShape: ([x]) => x!,
  });
}
