import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor, type Shape } from "@attngraph/tensor";
import { createCpuExecutor } from "../register-kernels.js";

/** Kernels run as the runtime runs them: checkCall holds each call to its op's declaration first. */
const cpu = createCpuExecutor();

const run = (x: Tensor, axis: number, before: number, after: number, outShape?: Shape) => {
  const a = axis < 0 ? axis + x.rank : axis;
  const shape = outShape ?? x.shape.map((d, i) => (i === a ? before + d + after : d));
  return cpu.dispatch({ kind: "pad", node: "qkv.grad", attrs: { axis, before, after }, inputs: [x], outShape: shape });
};

/** The float64 reference: out[..., k, ...] = x[..., k − before, ...] where that is inside x, else 0. */
function pad64(x: Tensor, axis: number, before: number, after: number): number[] {
  const xs = x.shape;
  const a = axis < 0 ? axis + xs.length : axis;
  const os = xs.map((d, i) => (i === a ? before + d + after : d));
  const out: number[] = [];
  const total = os.reduce((p, q) => p * q, 1);
  for (let k = 0; k < total; k++) {
    const idx: number[] = [];
    for (let d = os.length - 1, rest = k; d >= 0; d--) {
      idx.unshift(rest % os[d]!);
      rest = Math.floor(rest / os[d]!);
    }
    const src = idx.map((v, d) => (d === a ? v - before : v));
    out.push(src[a]! < 0 || src[a]! >= xs[a]! ? 0 : x.get(...src));
  }
  return out;
}

describe("pad kernel", () => {
  const x = Tensor.from(
    Array.from({ length: 24 }, (_, i) => i + 1),
    [2, 3, 4],
  );

  it.each([
    [2, 1, 2],
    [1, 0, 3],
    [0, 2, 0],
    [-1, 4, 0],
    [-2, 1, 1],
    [-3, 0, 1],
  ])("pads axis %i with %i before and %i after", (axis, before, after) => {
    const y = run(x, axis, before, after);
    expect(y.toArray()).toEqual(pad64(x, axis, before, after));
  });

  it("with a negative axis, pads the axis counted from the end", () => {
    const y = run(Tensor.from([1, 2, 3, 4], [2, 2]), -1, 1, 2);
    expect(y.shape).toEqual([2, 5]);
    expect(y.toArray()).toEqual([0, 1, 2, 0, 0, 0, 3, 4, 0, 0]);
  });

  it("reads a transposed (strided) input", () => {
    const t = x.permute([2, 0, 1]); // [4, 2, 3]
    expect(t.isContiguous()).toBe(false);
    expect(run(t, 1, 1, 2).toArray()).toEqual(pad64(t, 1, 1, 2));
    expect(run(t, -1, 2, 1).toArray()).toEqual(pad64(t, -1, 2, 1));
  });

  it("zeroes a planned out that holds garbage", () => {
    const shape = [2, 3, 7];
    const out = new Tensor(new Float32Array(42).fill(NaN), shape);
    const y = cpu.dispatch({
      kind: "pad",
      node: "qkv.grad",
      attrs: { axis: 2, before: 1, after: 2 },
      inputs: [x],
      outShape: shape,
      out,
    });
    expect(y).toBe(out);
    expect(y.toArray()).toEqual(pad64(x, 2, 1, 2));
  });

  it("pads an empty axis to zeros only", () => {
    expect(run(Tensor.zeros([2, 0]), 1, 1, 1).toArray()).toEqual([0, 0, 0, 0]);
  });

  it("rejects an axis out of range and a negative pad, naming node and field", () => {
    const subject = (fn: () => unknown) => {
      try {
        fn();
      } catch (e) {
        expect(AttnGraphError.isInstance(e) && e.code).toBe("attr");
        return (e as AttnGraphError).subject;
      }
      return undefined;
    };
    expect(subject(() => run(x, 3, 0, 1, [2, 3, 4]))).toBe("qkv.grad.axis");
    expect(subject(() => run(x, -4, 0, 1, [2, 3, 4]))).toBe("qkv.grad.axis");
    expect(subject(() => run(x, 0, -1, 1, [2, 3, 4]))).toBe("qkv.grad.before");
    expect(subject(() => run(x, 0, 0, 1.5, [2, 3, 4]))).toBe("qkv.grad.after");
  });
});
