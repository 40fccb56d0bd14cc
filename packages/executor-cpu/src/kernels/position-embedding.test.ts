// position-embedding and its gradient on the CPU: rows offset..offset+T-1 copied exactly, T from the ids' last dim
// (their values never read), a table read through any strides, and offsets past the table refused naming the node.
import { describe, expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import { mulberry32 } from "@attngraph/testkit";
import { thrownError as thrown } from "@attngraph/testkit/test-helpers";
import { dispatchCpu } from "../test-dispatch.js";

const P = 8;
const E = 3;
const next = mulberry32(5);
const table = Tensor.from(
  Array.from({ length: P * E }, () => next() * 2 - 1),
  [P, E],
);

const forward = (ids: Tensor<"int32">, weight: Tensor, offset: unknown) =>
  dispatchCpu("position-embedding", "wpe", { offset }, [ids, weight], [ids.shape.at(-1)!, weight.shape[1]!]);
const backward = (grad: Tensor, rows: number, offset: unknown) =>
  dispatchCpu("position-embedding-grad", "wpe.grad", { rows, offset }, [grad], [rows, grad.shape[1]!]);

/** Rows from..from+n-1 of the table, exactly. */
const rows = (from: number, n: number) => Array.from(table.toFloat32Array().slice(from * E, (from + n) * E));

describe("position-embedding kernel", () => {
  it("copies rows offset..offset+T-1, T the ids' last dim; the ids' values are never read", () => {
    const ids = Tensor.int32([99, -7, 1000, 5, 5, 5], [2, 3]); // out-of-vocabulary values: only the shape counts
    for (const offset of [0, 2, P - 3]) {
      const y = forward(ids, table, offset);
      expect(y.shape).toEqual([3, E]);
      expect(Array.from(y.toFloat32Array())).toEqual(rows(offset, 3));
    }
    expect(Array.from(forward(Tensor.int32([0], [1]), table, P - 1).toFloat32Array())).toEqual(rows(P - 1, 1));
    expect(forward(Tensor.int32([], [2, 0]), table, P).shape).toEqual([0, E]);
  });

  it("reads a table through transposed strides", () => {
    const tT = Tensor.from(
      Array.from({ length: P * E }, (_, k) => table.toFloat32Array()[(k % P) * E + Math.floor(k / P)]!),
      [E, P],
    ).transpose(0, 1);
    expect(tT.isContiguous()).toBe(false);
    expect(Array.from(forward(Tensor.int32([0, 0, 0, 0], [4]), tT, 3).toFloat32Array())).toEqual(rows(3, 4));
  });

  it("refuses positions past the table and an unbound or negative offset, naming the node", () => {
    const past = thrown(() => forward(Tensor.int32([0, 0, 0], [3]), table, 6));
    expect([past.subject, past.expected, past.got]).toEqual(["wpe.offset", "offset + T <= P = 8", "6 + 3 = 9"]);
    expect(past.message).toContain("positions 6..8 run past the table's P rows (the block size)");
    expect(thrown(() => forward(Tensor.int32([0], [1]), table, "N")).subject).toBe("wpe.offset");
    expect(thrown(() => forward(Tensor.int32([0], [1]), table, -1)).code).toBe("attr");
    expect(thrown(() => forward(Tensor.int32([3], []), table, 0)).subject).toBe("wpe.ids");
  });
});

describe("position-embedding-grad kernel", () => {
  it("puts grad at rows offset..offset+T-1 of a zero [P, E]", () => {
    const g = Tensor.from([1, 2, 3, 4, 5, 6], [2, 3]);
    const y = backward(g, 5, 2);
    expect(y.shape).toEqual([5, 3]);
    expect(Array.from(y.toFloat32Array())).toEqual([0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 0, 0, 0]);
    expect(Array.from(backward(g.transpose(0, 1).contiguous().transpose(0, 1), 2, 0).toFloat32Array())).toEqual([
      1, 2, 3, 4, 5, 6,
    ]);
  });

  it("is the transpose of the forward: ⟨pe(W), G⟩ = ⟨W, pe-grad(G)⟩", () => {
    const g = Tensor.from(
      Array.from({ length: 4 * E }, () => next() * 2 - 1),
      [4, E],
    );
    const fwd = forward(Tensor.int32([0, 0, 0, 0], [1, 4]), table, 3).toFloat32Array();
    const back = backward(g, P, 3).toFloat32Array();
    const lhs = fwd.reduce((a, v, k) => a + v * g.toFloat32Array()[k]!, 0);
    const rhs = back.reduce((a, v, k) => a + v * table.toFloat32Array()[k]!, 0);
    expect(lhs).toBeCloseTo(rhs, 5);
  });

  it("refuses rows past the table, naming the node", () => {
    const e = thrown(() => backward(Tensor.from([1, 2, 3, 4, 5, 6], [2, 3]), 3, 2));
    expect([e.subject, e.expected]).toEqual(["wpe.grad.offset", "offset + T <= P = 3"]);
    expect(thrown(() => backward(Tensor.from([1], [1]), 3, 0)).subject).toBe("wpe.grad.grad");
  });
});
