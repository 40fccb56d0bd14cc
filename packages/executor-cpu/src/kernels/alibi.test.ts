import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import type { AlibiAttrs } from "@attngraph/graph";
import { alibiImpl } from "./alibi.js";
import { createCpuExecutor } from "../register-kernels.js";

/** Kernels run as the runtime runs them: checkCall holds each call to its op's declaration first. */
const cpu = createCpuExecutor();

const NEG = -Infinity;

function run(scores: Tensor, attrs: Partial<AlibiAttrs>): Tensor {
  const full = { slopes: null, scale: 1, alignment: "top-left", ...attrs };
  return cpu.dispatch({ kind: "alibi", node: "scores.alibi", attrs: full, inputs: [scores], outShape: scores.shape });
}

const zeros = (shape: number[]) => Tensor.zeros(shape);

describe("alibi kernel", () => {
  it("adds slope · (j − i) to each score (top-left: query i at key position i)", () => {
    expect(run(zeros([1, 1, 2, 3]), { slopes: [0.5] }).toArray()).toEqual([0, 0.5, 1, -0.5, 0, 0.5]);
  });

  it("scales the scores, not the bias", () => {
    // 0.25 · 2 + 1 · (j − i)
    expect(run(Tensor.from(new Array(4).fill(2), [1, 1, 2, 2]), { slopes: [1], scale: 0.25 }).toArray()).toEqual([
      0.5, 1.5, -0.5, 0.5,
    ]);
  });

  it("uses one slope per head", () => {
    const y = run(zeros([1, 2, 1, 3]), { slopes: [1, 0.25] });
    expect(y.toArray()).toEqual([0, 1, 2, 0, 0.25, 0.5]);
  });

  it("bottom-right alignment puts query i at key position i + S − L", () => {
    // S − L = 2: query 0 sits at key 2, query 1 at key 3.
    expect(run(zeros([1, 1, 2, 4]), { slopes: [1], alignment: "bottom-right" }).toArray()).toEqual([
      -2, -1, 0, 1, -3, -2, -1, 0,
    ]);
  });

  it("slopes null = the ALiBi paper's slopes for H heads", () => {
    const y = run(zeros([1, 8, 1, 2]), {}).toArray();
    expect(y.filter((_, k) => k % 2 === 1)).toEqual([1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256]);
  });

  it("keeps −∞ (a masked score) as −∞, even with scale 0, and propagates NaN", () => {
    const y = run(Tensor.from([NEG, 1, NaN, NEG], [1, 1, 2, 2]), { slopes: [1], scale: 0 }).toArray();
    expect(y[0]).toBe(NEG);
    expect(y[1]).toBe(1);
    expect(y[2]).toBeNaN();
    expect(y[3]).toBe(NEG);
  });

  it("reads strided scores (the last axis strided, a non-zero offset)", () => {
    const data = Float32Array.from({ length: 3 + 2 * 3 * 4 }, (_, k) => Math.sin(k));
    const view = new Tensor(data, [4, 1, 3, 2], [6, 6, 2, 1], 3).permute([1, 3, 2, 0]); // [S, B, L, H] → [B, H, L, S], offset 3
    expect(view.isContiguous()).toBe(false);
    const strided = alibiImpl(view, [0.5, 0.125], 0.3, "bottom-right");
    const dense = alibiImpl(view.contiguous(), [0.5, 0.125], 0.3, "bottom-right");
    expect(Array.from(strided)).toEqual(Array.from(dense));
    expect(strided[0]).toBeCloseTo(0.3 * view.get(0, 0, 0, 0) + 0.5 * (0 - 1), 6);
  });

  it("does not mutate its input", () => {
    const x = Tensor.from([1, 2, 3, 4], [1, 1, 2, 2]);
    run(x, { slopes: [1] });
    expect(x.toArray()).toEqual([1, 2, 3, 4]);
  });

  it("rejects slopes whose length is not H with an attr error naming node and field", () => {
    try {
      run(zeros([1, 3, 2, 2]), { slopes: [0.5, 0.25] });
      expect.unreachable();
    } catch (e) {
      expect(AttnGraphError.isInstance(e)).toBe(true);
      const err = e as AttnGraphError;
      expect([err.code, err.subject, err.expected, err.got]).toEqual(["attr", "scores.alibi.slopes", "3 slopes", "2"]);
    }
  });

  it("rejects non-finite slopes, a bad scale or alignment, and a wrong rank", () => {
    expect(() => run(zeros([1, 1, 1, 1]), { slopes: [NaN] })).toThrow(/scores\.alibi\.slopes/);
    expect(() => run(zeros([1, 1, 1, 1]), { scale: Infinity })).toThrow(/scores\.alibi\.scale/);
    expect(() => run(zeros([1, 1, 1, 1]), { alignment: "center" as never })).toThrow(/scores\.alibi\.alignment/);
    expect(() => run(zeros([1, 2, 2]), {})).toThrow(/scores\.alibi\.scores.*rank 4/);
  });
});
