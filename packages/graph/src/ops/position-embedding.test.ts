// Shape and attribute rules of position-embedding and its gradient op: T from the ids' last dim, the bound check
// against the table's rows when the dims are known, and a named offset passed through until a run binds it.
import { describe, expect, it } from "vitest";
import { validationError } from "../../test/helpers.js";
import { GraphBuilder } from "../builder.js";

function builder(): GraphBuilder {
  const b = new GraphBuilder();
  b.input("tokens", ["B", "T"], "int32");
  b.input("fixed", [2, 5], "int32");
  b.input("flat", [5], "int32");
  b.weight("wpe", [8, 4]);
  return b;
}

describe("position-embedding", () => {
  it("reads T from the ids' last dim: ids [..., T] and weight [P, E] → [T, E], float32", () => {
    const b = builder();
    expect(b.shapeOf(b.add("position-embedding", "pos", { ids: "tokens", weight: "wpe" }))).toEqual(["T", 4]);
    expect(b.shapeOf(b.add("position-embedding", "pos2", { ids: "fixed", weight: "wpe" }, { offset: 3 }))).toEqual([
      5, 4,
    ]);
    expect(b.shapeOf(b.add("position-embedding", "pos3", { ids: "flat", weight: "wpe" }, { offset: "N" }))).toEqual([
      5, 4,
    ]);
    expect(b.dtypeOf("pos")).toBe("float32");
    const g = b.output("pos", "pos2", "pos3").build();
    expect(g.node("pos").attrs).toEqual({ offset: 0 });
    expect(g.node("pos3").attrs).toEqual({ offset: "N" });
  });

  it("fails naming the node when offset + T runs past the table's rows", () => {
    const b = builder();
    const e = validationError(() => b.add("position-embedding", "pos", { ids: "fixed", weight: "wpe" }, { offset: 4 }));
    expect([e.subject, e.expected, e.got]).toEqual(["pos.offset", "offset + T <= P = 8", "4 + 5 = 9"]);
    expect(e.message).toContain("positions 4..8 run past the table's P rows (the block size)");
    expect(b.shapeOf(b.add("position-embedding", "edge", { ids: "fixed", weight: "wpe" }, { offset: 3 }))).toEqual([
      5, 4,
    ]);
  });

  it("refuses float ids, a scalar ids, a negative offset and a table that is not [P, E]", () => {
    const b = builder();
    b.input("floats", ["B", "T"]);
    b.input("scalar", [], "int32");
    b.weight("vec", [8]);
    expect(validationError(() => b.add("position-embedding", "p1", { ids: "floats", weight: "wpe" })).subject).toBe(
      "p1.ids",
    );
    expect(validationError(() => b.add("position-embedding", "p2", { ids: "scalar", weight: "wpe" })).subject).toBe(
      "p2.ids",
    );
    expect(
      validationError(() => b.add("position-embedding", "p3", { ids: "tokens", weight: "wpe" }, { offset: -1 }))
        .subject,
    ).toBe("p3.offset");
    expect(validationError(() => b.add("position-embedding", "p4", { ids: "tokens", weight: "vec" })).subject).toBe(
      "p4.weight",
    );
  });

  it("broadcasts over the batch when added to token embeddings [B, T, E]", () => {
    const b = builder();
    b.weight("wte", [10, 4]);
    const tok = b.add("embedding", "tok", { ids: "tokens", weight: "wte" });
    const pos = b.add("position-embedding", "pos", { ids: "tokens", weight: "wpe" });
    expect(b.shapeOf(b.add("add", "x", { a: tok, b: pos }))).toEqual(["B", "T", 4]);
  });
});

describe("position-embedding-grad", () => {
  it("grad [T, E] → [rows, E], with the same bound check", () => {
    const b = new GraphBuilder();
    b.input("g", [5, 4]);
    b.input("g3", [1, 5, 4]);
    expect(b.shapeOf(b.add("position-embedding-grad", "d", { grad: "g" }, { rows: 8, offset: 2 }))).toEqual([8, 4]);
    expect(b.shapeOf(b.add("position-embedding-grad", "dn", { grad: "g" }, { rows: 8, offset: "N" }))).toEqual([8, 4]);
    const e = validationError(() => b.add("position-embedding-grad", "d2", { grad: "g" }, { rows: 8, offset: 4 }));
    expect([e.subject, e.expected]).toEqual(["d2.offset", "offset + T <= P = 8"]);
    expect(validationError(() => b.add("position-embedding-grad", "d3", { grad: "g3" }, { rows: 8 })).subject).toBe(
      "d3.grad",
    );
    expect(validationError(() => b.add("position-embedding-grad", "d4", { grad: "g" })).subject).toBe("d4.rows");
  });
});
