import { describe, expect, it } from "vitest";
import { validationError } from "../../test/helpers.js";
import { GraphBuilder } from "../builder.js";

describe("slice", () => {
  const qkv = (): GraphBuilder => {
    const b = new GraphBuilder();
    b.input("qkv", ["B", "T", 24]);
    return b;
  };

  it("splits a fused QKV projection into three views", () => {
    const b = qkv();
    const parts = [0, 1, 2].map((i) => b.add("slice", `part${i}`, { x: "qkv" }, { axis: -1, start: 8 * i, size: 8 }));
    for (const p of parts) expect(b.shapeOf(p)).toEqual(["B", "T", 8]);
    const g = b.output(...parts).build();
    expect(g.registry.get("slice").view).toBe(true);
    expect(g.node("part2").attrs).toEqual({ axis: -1, start: 16, size: 8 });
  });

  it("narrows a symbolic axis without a bound check", () => {
    const b = qkv();
    expect(b.shapeOf(b.add("slice", "s", { x: "qkv" }, { axis: 1, start: 5, size: 2 }))).toEqual(["B", 2, 24]);
  });

  it("rejects an axis out of range and a slice past the end", () => {
    const b = qkv();
    const e = validationError(() => b.add("slice", "s", { x: "qkv" }, { axis: 3, start: 0, size: 1 }));
    expect([e.subject, e.expected, e.got]).toEqual(["s.axis", "-3..2", "3"]);
    expect(validationError(() => b.add("slice", "s", { x: "qkv" }, { axis: -4, start: 0, size: 1 })).subject).toBe(
      "s.axis",
    );
    const past = validationError(() => b.add("slice", "s", { x: "qkv" }, { axis: 2, start: 20, size: 8 }));
    expect([past.subject, past.expected, past.got]).toEqual(["s.size", "start + size <= 24", "20 + 8"]);
    expect(validationError(() => b.add("slice", "s", { x: "qkv" }, { axis: 2, start: 0 })).message).toContain(
      "missing attribute",
    );
  });

  it("counts a negative start from the end, as torch.narrow: the last position of a symbolic axis", () => {
    const b = qkv();
    expect(b.shapeOf(b.add("slice", "last", { x: "qkv" }, { axis: 1, start: -1, size: 1 }))).toEqual(["B", 1, 24]);
    expect(b.shapeOf(b.add("slice", "tail", { x: "qkv" }, { axis: 2, start: -8, size: 8 }))).toEqual(["B", "T", 8]);
    expect(b.shapeOf(b.add("slice", "mid", { x: "qkv" }, { axis: 2, start: -16, size: 8 }))).toEqual(["B", "T", 8]);
  });

  it("rejects a slice from the end that runs past it, or starts before the axis", () => {
    const b = qkv();
    const past = validationError(() => b.add("slice", "s", { x: "qkv" }, { axis: 2, start: -1, size: 8 }));
    expect([past.subject, past.expected, past.got]).toEqual(["s.size", "start + size <= 0", "-1 + 8"]);
    const before = validationError(() => b.add("slice", "s", { x: "qkv" }, { axis: 2, start: -25, size: 1 }));
    expect([before.subject, before.expected, before.got]).toEqual(["s.start", "start >= -24", "-25"]);
  });
});
