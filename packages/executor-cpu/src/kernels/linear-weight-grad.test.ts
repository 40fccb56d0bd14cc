import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { linearWeightGrad64, randomTensor as rand } from "@attngraph/testkit";
import { expectNear as near } from "@attngraph/testkit/test-helpers";
import { createCpuExecutor } from "../register-kernels.js";

/** Kernels run as the runtime runs them: checkCall holds each call to its op's declaration first. */
const cpu = createCpuExecutor();

const run = (grad: Tensor, x: Tensor) =>
  cpu.dispatch({
    kind: "linear-weight-grad",
    node: "W_query.grad",
    attrs: {},
    inputs: [grad, x],
    outShape: [grad.shape.at(-1)!, x.shape.at(-1)!],
  });

/** The float64 reference (testkit's, written apart from the kernels), on the tensors' row-major elements. */
const weightGrad64 = (grad: Tensor, x: Tensor): number[] =>
  Array.from(
    linearWeightGrad64(
      Float64Array.from(grad.toArray()),
      grad.shape.at(-1)!,
      Float64Array.from(x.toArray()),
      x.shape.at(-1)!,
    ),
  );

describe("linear-weight-grad kernel", () => {
  it("is gradᵀ · x over every leading position", () => {
    const grad = rand([2, 5, 7], 1);
    const x = rand([2, 5, 9], 2);
    const y = run(grad, x);
    expect(y.shape).toEqual([7, 9]);
    near(y, weightGrad64(grad, x));
  });

  it("matches a hand-computed product", () => {
    // grad [[1, 2], [3, 4]], x [[5, 6, 7], [8, 9, 10]]: dW[0, :] = 1·[5, 6, 7] + 3·[8, 9, 10], dW[1, :] = 2·… + 4·…
    const y = run(Tensor.from([1, 2, 3, 4], [2, 2]), Tensor.from([5, 6, 7, 8, 9, 10], [2, 3]));
    expect(y.toArray()).toEqual([29, 33, 37, 42, 48, 54]);
  });

  it("reads strided inputs: transposed grad and x, and leading axes that do not collapse", () => {
    const grad = rand([6, 4, 3], 3).permute([2, 1, 0]); // [3, 4, 6], last axis strided
    const x = rand([4, 3, 5], 4).permute([1, 0, 2]); // [3, 4, 5], leading axes do not collapse
    expect(grad.isContiguous() || x.isContiguous()).toBe(false);
    near(run(grad, x), weightGrad64(grad, x));
  });

  it("handles rank 1 (one position) and sizes that are not multiples of the tile", () => {
    const g = rand([13], 5);
    const x = rand([6], 6);
    near(run(g, x), weightGrad64(g, x));
    const g2 = rand([67, 5], 7);
    const x2 = rand([67, 70], 8);
    near(run(g2, x2), weightGrad64(g2, x2));
  });

  it("gives zeros when there are no positions", () => {
    expect(run(Tensor.zeros([0, 2]), Tensor.zeros([0, 3])).toArray()).toEqual([0, 0, 0, 0, 0, 0]);
  });

  it("rejects leading axes that differ, naming the node", () => {
    try {
      cpu.dispatch({
        kind: "linear-weight-grad",
        node: "W_query.grad",
        attrs: {},
        inputs: [rand([2, 3, 4], 1), rand([2, 4, 5], 2)],
        outShape: [4, 5],
      });
      expect.unreachable();
    } catch (e) {
      expect(AttnGraphError.isInstance(e) && e.code).toBe("shape");
      expect((e as AttnGraphError).subject).toBe("W_query.grad.x");
    }
  });
});
