// cross-entropy on wasm against F.cross_entropy written here in float64 (logsumexp with the row max subtracted):
// every reduction over [N, V] and [B, T, V], ignoreIndex (inside and outside [0, V)), an all-ignored mean = 0, strided
// logits and targets, huge and infinite logits, NaN propagation, out-of-range targets (errors naming the position,
// nothing written), and the call's other errors.
import { describe, expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import { f64, onWasm, onWasmViews, random, thrown, wasmExecutor, worst } from "../test-util.js";
import { failsUntouched } from "../test-dispatch.js";

const ex = await wasmExecutor();
type Reduction = "mean" | "sum" | "none";

/** Per-position losses and the reduction, in float64. */
function crossEntropy64(
  logits: Tensor,
  targets: Tensor<"int32">,
  reduction: Reduction,
  ignoreIndex: number | null = null,
): Float64Array {
  const v = logits.shape[logits.rank - 1]!;
  const x = f64(logits);
  const t = targets.toInt32Array();
  const per = new Float64Array(t.length);
  let count = 0;
  let total = 0;
  t.forEach((target, r) => {
    if (target === ignoreIndex) return;
    const row = x.subarray(r * v, r * v + v);
    const max = row.reduce((m, a) => Math.max(m, a), -Infinity);
    per[r] = Math.log(row.reduce((s, a) => s + Math.exp(a - max), 0)) + max - row[target]!;
    total += per[r]!;
    count++;
  });
  if (reduction === "none") return per;
  return Float64Array.of(reduction === "sum" ? total : count === 0 ? 0 : total / count);
}

const run = (
  logits: Tensor,
  targets: Tensor<"int32">,
  reduction: Reduction,
  ignoreIndex: number | null = null,
  views = false,
) =>
  (views ? onWasmViews : onWasm)(
    ex,
    "cross-entropy",
    { ignoreIndex, reduction },
    [logits, targets],
    reduction === "none" ? targets.shape : [],
  );

const expectLoss = (got: Tensor, want: Float64Array) => {
  expect(worst(got, new Tensor(Float32Array.from(want), got.shape), 1e-6, 1e-6)).toBeLessThan(1);
};

describe("cross-entropy on wasm", () => {
  const logits = random([2, 5, 11], 1, 3);
  const targets = Tensor.int32([0, 10, 3, 3, 7, 1, 2, 9, 5, 0], [2, 5]);
  for (const reduction of ["mean", "sum", "none"] as const) {
    it(`${reduction} over [B, T, V] and over [N, V]`, () => {
      expectLoss(run(logits, targets, reduction), crossEntropy64(logits, targets, reduction));
      const flat = logits.reshape([10, 11]);
      const ft = targets.reshape([10]);
      expectLoss(run(flat, ft, reduction), crossEntropy64(flat, ft, reduction));
    });
  }

  it("ignoreIndex: skipped positions give 0 and are not counted; the ignore index may be any int32, even inside [0, V)", () => {
    for (const ignore of [-100, 3, 2 ** 31 - 1]) {
      const t = Tensor.int32([0, ignore, 4, ignore, 7, 1, 2, ignore, 5, 3], [2, 5]); // with ignore 3, the last one too
      for (const reduction of ["mean", "sum", "none"] as const) {
        const got = run(logits, t, reduction, ignore);
        expectLoss(got, crossEntropy64(logits, t, reduction, ignore));
        if (reduction === "none") expect(got.toFloat32Array()[1]).toBe(0);
      }
    }
  });

  it("every position ignored: mean 0 (not NaN), sum 0, none all zeros", () => {
    const none = Tensor.int32(new Array<number>(10).fill(-100), [2, 5]);
    const nan = random([2, 5, 11], 2).contiguous();
    nan.data.fill(NaN, 0, 11); // an ignored row's NaN is never read
    for (const l of [logits, nan]) {
      expect(Array.from(run(l, none, "mean", -100).toFloat32Array())).toEqual([0]);
      expect(Array.from(run(l, none, "sum", -100).toFloat32Array())).toEqual([0]);
      expect(
        run(l, none, "none", -100)
          .toFloat32Array()
          .every((v) => v === 0),
      ).toBe(true);
    }
  });

  it("strided logits (class axis not contiguous) and strided targets", () => {
    const l = random([11, 2, 5], 3, 3).permute([1, 2, 0]); // [2, 5, V], V strided by 10
    const t = Tensor.int32([0, 10, 3, 3, 7, 1, 2, 9, 5, 0], [5, 2]).transpose(0, 1); // [2, 5] strided
    for (const reduction of ["mean", "sum", "none"] as const) {
      expectLoss(run(l, t, reduction, -100, true), crossEntropy64(l, t, reduction, -100));
    }
  });

  it("huge logits stay finite (the row max is subtracted); −∞ logits off the target are fine", () => {
    const l = Tensor.from([1000, 0, -1000, 5, 1e4, 1e4 - 1, -Infinity, 2, -Infinity, 3e38, 3e38, -3e38], [4, 3]);
    const t = Tensor.int32([0, 1, 1, 0], [4]);
    const got = run(l, t, "none");
    expectLoss(got, crossEntropy64(l, t, "none"));
    expect(got.toFloat32Array().every(Number.isFinite)).toBe(true);
  });

  it("NaN and +∞ logits propagate as IEEE arithmetic does: that row's loss, and the mean", () => {
    const l = random([3, 4], 4).contiguous();
    l.data[1] = NaN;
    l.data[4 + 2] = Infinity;
    const t = Tensor.int32([0, 1, 2], [3]);
    const per = run(l, t, "none").toFloat32Array();
    expect(Number.isNaN(per[0]!)).toBe(true);
    expect(Number.isNaN(per[1]!)).toBe(true); // ∞ − ∞
    expect(Number.isFinite(per[2]!)).toBe(true);
    expect(run(l, t, "mean").toFloat32Array()[0]).toBeNaN();
    // a target logit of −∞ with finite others: +∞ loss
    const inf = run(Tensor.from([-Infinity, 0], [1, 2]), Tensor.int32([0], [1]), "none").toFloat32Array();
    expect(inf[0]).toBe(Infinity);
  });

  it("a target outside [0, V) that is not the ignore index is an error naming the node, position and value; nothing written", () => {
    const l = ex.upload(random([2, 3, 4], 5));
    for (const [values, ignoreIndex, msg] of [
      [[0, 1, 2, 3, 4, 0], null, "got 4 at [1, 1]"],
      [[0, -100, 2, -1, 1, 0], -100, "got -1 at [1, 0]"],
      [[0, 1, 2, 3, 1, -100], null, "got -100 at [1, 2]"],
    ] as const) {
      const t = ex.upload(Tensor.int32(values, [2, 3]));
      const op = { kind: "cross-entropy", node: "loss", attrs: { ignoreIndex, reduction: "none" }, outShape: [2, 3] };
      const e = failsUntouched(ex, op, [l, t]);
      expect([e.code, e.subject]).toEqual(["input", "loss.targets"]);
      expect(e.message).toMatch(
        new RegExp(
          `^loss\\.targets: target out of range, expected target in \\[0, 4\\)${ignoreIndex === null ? "" : " or -100 \\(ignored\\)"}, ${msg.replace(/[[\]]/g, "\\$&")}$`,
        ),
      );
      ex.release(t);
    }
  });

  it("errors name the node and field: dtypes both ways, ranks, dims, attributes", () => {
    const l = ex.upload(random([2, 3, 4], 6));
    const t = ex.upload(Tensor.int32([0, 1, 2, 3, 0, 1], [2, 3]));
    const call = (inputs: unknown[], attrs: Record<string, unknown> = { ignoreIndex: null, reduction: "mean" }) =>
      thrown(() =>
        ex.dispatch({ kind: "cross-entropy", node: "loss", attrs, inputs: inputs as never, outShape: [] }),
      ) as Error;
    expect(call([l, ex.upload(Tensor.from([0, 1, 2, 3, 0, 1], [2, 3]))]).message).toBe(
      "loss.targets: input 1 (targets) of op cross-entropy has the wrong dtype, expected int32, got float32",
    );
    expect(call([ex.upload(Tensor.int32(new Array<number>(24).fill(0), [2, 3, 4])), t]).message).toMatch(
      /^loss\.logits: .*wrong dtype, expected float32, got int32/,
    );
    expect(call([ex.upload(random([4], 1)), ex.upload(Tensor.int32([0], []))]).message).toMatch(
      /^loss\.logits: cross-entropy needs logits with a class axis/,
    );
    expect(call([l, ex.upload(Tensor.int32([0, 1], [2]))]).message).toMatch(
      /^loss\.targets: targets must have the logits' shape without the class axis, expected \[2, 3\], got \[2\]/,
    );
    expect(call([l, ex.upload(Tensor.int32([0, 1, 2, 3, 0, 1], [3, 2]))]).message).toMatch(
      /^loss\.targets: targets dim 0 must match the logits, expected 2, got 3/,
    );
    expect(call([l, t], { ignoreIndex: 1.5, reduction: "mean" }).message).toMatch(/^loss\.ignoreIndex: /);
    expect(call([l, t], { ignoreIndex: null, reduction: "max" }).message).toMatch(/^loss\.reduction: /);
    // absent attributes take the defaults (ignoreIndex null, reduction mean)
    const y = ex.dispatch({ kind: "cross-entropy", node: "loss", attrs: {}, inputs: [l, t], outShape: [] });
    expect(ex.download(y).shape).toEqual([]);
  });
});
