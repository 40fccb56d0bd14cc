import { describe, expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import { thrownError } from "@attngraph/testkit/test-helpers";
import type { MaskAttrs } from "@attngraph/graph";
import { createCpuExecutor } from "../register-kernels.js";

/** Kernels run as the runtime runs them: checkCall holds each call to its op's declaration first. */
const cpu = createCpuExecutor();

const NEG = -Infinity;

function run(scores: Tensor, attrs: Partial<MaskAttrs>, pad?: Tensor): Tensor {
  const full = { causal: false, window: null, alignment: "top-left", ...attrs };
  return cpu.dispatch({ kind: "mask", node: "masked", attrs: full, inputs: [scores, pad], outShape: scores.shape });
}

/** A [1, 1, L, S] tensor of 1..L·S, so unmasked entries are recognisable. */
const ramp = (l: number, s: number) =>
  Tensor.from(
    Array.from({ length: l * s }, (_, i) => i + 1),
    [1, 1, l, s],
  );
/** Which entries of a [.., L, S] result are hidden, as rows of 0/1 strings ("1" = masked). */
const pattern = (t: Tensor, s: number) => {
  const v = t.toArray();
  const rows: string[] = [];
  for (let i = 0; i < v.length; i += s)
    rows.push(
      v
        .slice(i, i + s)
        .map((x) => (x === NEG ? "1" : "0"))
        .join(""),
    );
  return rows;
};

describe("mask kernel", () => {
  it("without masks copies the scores into a new tensor", () => {
    const x = ramp(2, 3);
    const y = run(x, {});
    expect(y.toArray()).toEqual(x.toArray());
    expect(y.data).not.toBe(x.data);
  });

  it("causal top-left hides keys j > i and keeps the other scores", () => {
    const y = run(ramp(3, 3), { causal: true });
    expect(y.toArray()).toEqual([1, NEG, NEG, 4, 5, NEG, 7, 8, 9]);
  });

  it("causal top-left with L < S lines query i up with key i", () => {
    expect(pattern(run(ramp(2, 4), { causal: true }), 4)).toEqual(["0111", "0011"]);
  });

  it("causal bottom-right lines the last query up with the last key", () => {
    // off = S − L = 2: query 0 sees keys 0..2, query 1 sees 0..3.
    expect(pattern(run(ramp(2, 4), { causal: true, alignment: "bottom-right" }), 4)).toEqual(["0001", "0000"]);
  });

  it("causal bottom-right with L > S hides every key of the first queries", () => {
    // off = S − L = −1: query 0 sees nothing, query 1 sees key 0, query 2 sees keys 0..1.
    expect(pattern(run(ramp(3, 2), { causal: true, alignment: "bottom-right" }), 2)).toEqual(["11", "01", "00"]);
  });

  it("a sliding window w lets query i see i − w < j <= i", () => {
    expect(pattern(run(ramp(4, 4), { causal: true, window: 2 }), 4)).toEqual(["0111", "0011", "1001", "1100"]);
  });

  it("a window with bottom-right alignment shifts with the causal diagonal", () => {
    // off = 2, w = 2: query 0 sees keys 1..2, query 1 sees keys 2..3.
    expect(pattern(run(ramp(2, 4), { causal: true, window: 2, alignment: "bottom-right" }), 4)).toEqual([
      "1001",
      "1100",
    ]);
  });

  it("key padding hides padded keys for every head and query of that batch", () => {
    const scores = Tensor.from(
      Array.from({ length: 2 * 2 * 1 * 3 }, (_, i) => i),
      [2, 2, 1, 3],
    );
    const pad = Tensor.from([0, 0, 1, 1, 0, 0], [2, 3]);
    expect(run(scores, {}, pad).toArray()).toEqual([0, 1, NEG, 3, 4, NEG, NEG, 7, 8, NEG, 10, 11]);
  });

  it("composes causal and padding by or", () => {
    const pad = Tensor.from([1, 0, 0], [1, 3]);
    expect(pattern(run(ramp(3, 3), { causal: true }, pad), 3)).toEqual(["111", "101", "100"]);
  });

  it("reads strided scores and a strided padding mask", () => {
    const dense = Tensor.from(
      Array.from({ length: 2 * 3 }, (_, i) => i + 1),
      [1, 1, 2, 3],
    );
    const viaT = Tensor.from([1, 4, 2, 5, 3, 6], [1, 1, 3, 2]).transpose(2, 3); // same values, strided
    const padT = Tensor.from([0, 1, 0], [3, 1]).transpose(0, 1);
    expect(run(viaT, { causal: true }, padT).toArray()).toEqual(
      run(dense, { causal: true }, padT.contiguous()).toArray(),
    );
    expect(run(viaT, { causal: true }, padT).toArray()).toEqual([1, NEG, NEG, 4, NEG, NEG]);
  });

  it.each([
    [2, "2 at [0, 1]"],
    [NaN, "NaN at [0, 1]"],
    [0.5, "0.5 at [0, 1]"],
  ])("rejects a padding value of %s with an input error naming the node", (value, got) => {
    const scores = ramp(1, 3);
    const before = scores.toArray();
    const err = thrownError(() => run(scores, { causal: true }, Tensor.from([0, value, 1], [1, 3])));
    expect(err.code).toBe("input");
    expect(err.subject).toBe("masked.keyPaddingMask");
    expect(err.expected).toBe("0 or 1");
    expect(err.got).toBe(got);
    expect(err.message).toContain("masked.keyPaddingMask");
    expect(scores.toArray()).toEqual(before);
  });

  it("rejects a padding mask whose length is not S", () => {
    expect(() => run(ramp(1, 3), {}, Tensor.from([0, 0], [1, 2]))).toThrow(/masked\.keyPaddingMask.*key length S/);
  });

  it("rejects a window without causal", () => {
    expect(() => run(ramp(2, 2), { window: 1 })).toThrow(/masked\.window/);
  });
});
