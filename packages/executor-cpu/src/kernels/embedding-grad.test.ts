import { describe, expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import { randomTensor as rand } from "@attngraph/testkit";
import { thrownSubject as subject, expectNear as near, thrownError } from "@attngraph/testkit/test-helpers";
import { cpu, dispatchCpu } from "../test-dispatch.js";

const run = (ids: Tensor<"int32">, grad: Tensor, rows: number) =>
  dispatchCpu("embedding-grad", "tok_emb.grad", { rows }, [ids, grad], [rows, grad.shape.at(-1)!]);

/** The float64 reference: zeros, then out[ids[p], :] += grad[p, :] for every position p in order. */
function embeddingGrad64(ids: Tensor<"int32">, grad: Tensor, rows: number): number[] {
  const e = grad.shape.at(-1)!;
  const g = grad.toArray();
  const out = new Array<number>(rows * e).fill(0);
  Array.from(ids.toInt32Array()).forEach((id, p) => {
    for (let j = 0; j < e; j++) out[id * e + j]! += g[p * e + j]!;
  });
  return out;
}

describe("embedding-grad kernel", () => {
  it("scatters grad rows by id; rows no id names stay 0", () => {
    const ids = Tensor.int32([2, 0], [2]);
    const y = run(ids, Tensor.from([1, 2, 3, 4], [2, 2]), 4);
    expect(y.shape).toEqual([4, 2]);
    expect(y.toArray()).toEqual([3, 4, 0, 0, 1, 2, 0, 0]);
  });

  it("accumulates repeated ids", () => {
    const ids = Tensor.int32([1, 3, 1, 1, 0, 3], [2, 3]);
    const grad = rand([2, 3, 5], 1);
    near(run(ids, grad, 4), embeddingGrad64(ids, grad, 4));
    const again = run(Tensor.int32([2, 2, 2], [3]), Tensor.from([0.5, 1, 0.25, 2, 0.125, 4], [3, 2]), 3);
    expect(again.toArray()).toEqual([0, 0, 0, 0, 0.875, 7]);
  });

  it("reads strided grad and ids", () => {
    const grad = rand([5, 2, 3], 2).permute([1, 2, 0]); // [2, 3, 5]
    const ids = Tensor.int32([4, 0, 4, 2, 2, 4], [3, 2]).transpose(0, 1); // [2, 3]
    expect(grad.isContiguous() || ids.isContiguous()).toBe(false);
    near(run(ids, grad, 6), embeddingGrad64(ids, grad, 6));
  });

  it("is the transpose of the forward embedding: ⟨embedding(W), G⟩ = ⟨W, embedding-grad(G)⟩", () => {
    const ids = Tensor.int32([3, 1, 3, 0, 2, 3], [6]);
    const w = rand([5, 4], 3);
    const g = rand([6, 4], 4);
    const fwd = dispatchCpu("embedding", "tok_emb", {}, [ids, w], [6, 4]).toArray();
    const back = run(ids, g, 5).toArray();
    const lhs = fwd.reduce((a, v, k) => a + v * g.toArray()[k]!, 0);
    const rhs = back.reduce((a, v, k) => a + v * w.toArray()[k]!, 0);
    expect(lhs).toBeCloseTo(rhs, 5);
  });

  it("zeroes a planned out that holds garbage", () => {
    const out = new Tensor(new Float32Array(6).fill(NaN), [3, 2]);
    const y = cpu.dispatch({
      kind: "embedding-grad",
      node: "tok_emb.grad",
      attrs: { rows: 3 },
      inputs: [Tensor.int32([1], [1]) as unknown as Tensor, Tensor.from([5, 6], [1, 2])],
      outShape: [3, 2],
      out,
    });
    expect(y).toBe(out);
    expect(y.toArray()).toEqual([0, 0, 5, 6, 0, 0]);
  });

  it("rejects an id outside [0, V) with the forward kernel's error, naming node, position and id", () => {
    const grad = rand([2, 2, 3], 5);
    for (const [bad, where] of [
      [4, "[1, 0]"],
      [-1, "[1, 0]"],
    ] as const) {
      const ids = Tensor.int32([0, 1, bad, 2], [2, 2]);
      const err = thrownError(() => run(ids, grad, 4));
      expect(err.code).toBe("input");
      expect(err.subject).toBe("tok_emb.grad.ids");
      expect(err.message).toContain(`${bad} at ${where}`);
      // The same words as the forward kernel's error for the same ids.
      const fwd = thrownError(() => dispatchCpu("embedding", "tok_emb.grad", {}, [ids, rand([4, 3], 6)], [2, 2, 3]));
      expect(err.message).toBe(fwd.message);
    }
  });

  it("rejects float ids, a grad of the wrong shape and a bad rows attribute", () => {
    const ids = Tensor.int32([0, 1], [2]);
    expect(
      subject(() =>
        dispatchCpu("embedding-grad", "e", { rows: 2 }, [Tensor.from([0, 1], [2]), rand([2, 3], 1)], [2, 3]),
      ),
    ).toBe("e.ids");
    expect(subject(() => run(ids, rand([3, 3], 1), 2))).toBe("tok_emb.grad.grad");
    expect(subject(() => run(ids, rand([2], 1), 2))).toBe("tok_emb.grad.grad");
    expect(subject(() => run(ids, rand([2, 3], 1), 0))).toBe("tok_emb.grad.rows");
  });
});
