import { describe, expect, it } from "vitest";
import { AttnGraphError } from "@attngraph/tensor";
import { GraphBuilder } from "../builder.js";
import { compilePointwise } from "../expr/pointwise.js";
import type { Expr } from "../expr/types.js";
import { definePointwiseOp, pointwiseGrad } from "./pointwise.js";
import { siluOp } from "./silu.js";

const el = (name: string) => ({ op: "input", name, index: [] });
const failure = (f: () => unknown): AttnGraphError => {
  try {
    f();
  } catch (e) {
    if (AttnGraphError.isInstance(e)) return e;
    throw e;
  }
  throw new Error("expected an AttnGraphError");
};

describe("pointwise ops", () => {
  it("silu is its expression over slot x0, and its derived gradient is torch's silu_backward", () => {
    const e = siluOp.pointwise!({});
    const g = pointwiseGrad(e, 0);
    if (typeof g === "string") throw new Error(g);
    expect(g.reads).toEqual(["x0"]);
    const f = compilePointwise(g.expr, ["x0", "x1", "x2", "x3"], { float64: true });
    for (const x of [-3, -0.5, 0, 0.7, 4]) {
      const s = 1 / (1 + Math.exp(-x));
      expect(f(1.5, x, 0, 0)).toBeCloseTo(1.5 * s * (1 + x * (1 - s)), 12);
    }
  });

  it("a pointwise node checks shapes and its expression, naming the node and the field", () => {
    const b = new GraphBuilder();
    b.input("a", [2, 3]);
    b.input("c", [3, 2]);
    expect(
      b.shapeOf(b.add("pointwise", "ok", { x0: "a", x1: "a" }, { expr: { op: "add", args: [el("x0"), el("x1")] } })),
    ).toEqual([2, 3]);
    expect(failure(() => b.add("pointwise", "p1", { x0: "a", x1: "c" }, { expr: el("x0") })).subject).toBe("p1.x1");
    expect(
      failure(() => b.add("pointwise", "p2", { x0: "a" }, { expr: { op: "add", args: [el("x0"), el("x1")] } })).subject,
    ).toBe("p2.expr.args[1].name");
    expect(
      failure(() => b.add("pointwise", "p3", { x0: "a" }, { expr: { op: "add", args: [el("x0"), "q"] } })).subject,
    ).toBe("p3.expr.args[1]");
    expect(
      failure(() => b.add("pointwise", "p4", { x0: "a" }, { expr: { op: "lt", args: [el("x0"), 1] } })).message,
    ).toMatch(/must be a number/);
  });

  it("definePointwiseOp refuses a bad expression or more than four inputs when it is declared", () => {
    expect(
      failure(() => definePointwiseOp({ kind: "bad", doc: "", inputs: [{ name: "x" }], expr: el("y") })).subject,
    ).toMatch(/^op bad: expr/);
    const five = ["a", "b", "c", "d", "e"].map((name) => ({ name }));
    expect(failure(() => definePointwiseOp({ kind: "wide", doc: "", inputs: five, expr: el("a") })).subject).toBe(
      "op wide",
    );
  });

  it("a constant derivative still makes a node of the input's shape (x0 + 2 → grad)", () => {
    const g = pointwiseGrad({ op: "add", args: [el("x0"), 2] } as Expr, 0);
    expect(typeof g !== "string" && g.expr).toEqual(el("x0"));
  });
});
