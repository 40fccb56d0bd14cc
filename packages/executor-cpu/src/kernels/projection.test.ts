import { describe, expect, it } from "vitest";
import { AttnGraphError, ShapeError, Tensor } from "@attngraph/tensor";
import { projectionImpl } from "./projection.js";
import { outProjImpl } from "./out-proj.js";
import { createCpuExecutor } from "../register-kernels.js";

/** Kernels run as the runtime runs them: checkCall holds each call to its op's declaration first. */
const cpu = createCpuExecutor();

const run = (x: Tensor, w: Tensor, b?: Tensor, kind = "projection") =>
  cpu.dispatch({
    kind,
    node: "queries",
    attrs: {},
    inputs: [x, w, b],
    outShape: [...x.shape.slice(0, -1), w.shape[0]!],
  });

describe("projection kernel", () => {
  // x [1, 2, 3], W [2, 3] (nn.Linear: out × in), b [2]
  const x = Tensor.from([1, 2, 3, 4, 5, 6], [1, 2, 3]);
  const w = Tensor.from([1, 0, -1, 0.5, 0.5, 0.5], [2, 3]);
  const b = Tensor.from([10, -10], [2]);

  it("computes x · Wᵀ + b over the last axis (hand-computed)", () => {
    // row [1,2,3]: [1 − 3, 0.5·6] = [−2, 3]; row [4,5,6]: [4 − 6, 0.5·15] = [−2, 7.5]
    const y = run(x, w, b);
    expect(y.shape).toEqual([1, 2, 2]);
    expect(y.toArray()).toEqual([8, -7, 8, -2.5]);
    expect(run(x, w).toArray()).toEqual([-2, 3, -2, 7.5]);
  });

  it("reads a transposed x and a transposed weight through their strides", () => {
    const xT = Tensor.from([1, 4, 2, 5, 3, 6], [3, 2]).transpose(0, 1); // == x[0] as a strided view
    const wT = Tensor.from([1, 0.5, 0, 0.5, -1, 0.5], [3, 2]).transpose(0, 1); // == w as a strided view
    expect(xT.isContiguous() || wT.isContiguous()).toBe(false);
    expect(run(xT, wT, b).toArray()).toEqual([8, -7, 8, -2.5]);
  });

  it("reads a sliced x (one third of a fused QKV output) at its offset", () => {
    const fused = Tensor.from([0, 0, 1, 2, 3, 9, 0, 0, 4, 5, 6, 9], [2, 6]);
    const mid = new Tensor(fused.data, [2, 3], fused.strides, 2); // columns 2..4
    expect(run(mid, w, b).toArray()).toEqual([8, -7, 8, -2.5]);
  });

  it("gathers an x whose leading axes do not collapse into one row stride ([L, B, E] seen through a permute)", () => {
    const xb = Tensor.from(
      Array.from({ length: 2 * 5 * 3 }, (_, i) => Math.cos(i)),
      [2, 5, 3],
    ); // [B, L, E]
    const xl = xb.permute([1, 0, 2]); // [L, B, E]: rows are not evenly spaced
    const got = run(xl, w, b);
    const want = run(xl.contiguous(), w, b);
    expect(got.shape).toEqual([5, 2, 2]);
    expect(got.toArray()).toEqual(want.toArray());
  });

  it("accumulates in float64 before the single float32 rounding", () => {
    // 1e8 + 1 − 1e8: float32 accumulation loses the 1, float64 keeps it.
    const y = projectionImpl(Tensor.from([1e8, 1, -1e8], [3]), Tensor.from([1, 1, 1], [1, 3]), undefined);
    expect(y[0]).toBe(1);
  });

  it("out-proj shares the implementation", () => {
    expect(outProjImpl).toBe(projectionImpl);
    expect(run(x, w, b, "out-proj").toArray()).toEqual(run(x, w, b).toArray());
  });

  it("rejects a weight whose columns are not In, and a wrong bias, naming the node", () => {
    expect(() => run(x, Tensor.zeros([2, 4]))).toThrow(ShapeError);
    expect(() => run(x, Tensor.zeros([2, 4]))).toThrow(
      /queries\.weight: weight columns must equal the input's last dim/,
    );
    expect(() => run(x, w, Tensor.zeros([3]))).toThrow(/queries\.bias/);
  });

  it("rejects a missing weight with an input error naming node and slot", () => {
    try {
      cpu.dispatch({ kind: "projection", node: "queries", attrs: {}, inputs: [x], outShape: [1, 2, 2] });
      expect.unreachable();
    } catch (e) {
      expect(AttnGraphError.isInstance(e) && e.code).toBe("input");
      expect((e as AttnGraphError).message).toMatch(/^queries\.weight: missing required input 1 \(weight\)/);
    }
  });
});
