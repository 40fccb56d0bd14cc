// The cross-entropy kernel against float64 F.cross_entropy: mean, sum and none over [N, V] and [B, T, V] with V past one
// workgroup, the rank-0 result, ignoreIndex (not counted in the mean; all ignored → 0, not NaN), strided logits and
// targets on the GPU, logits of ±1e4 (stable), NaN and infinities as IEEE gives them, and the errors.
import { afterAll, describe, expect, it } from "vitest";
import { Tensor, compare } from "@attngraph/tensor";
import { createWebGpuExecutor } from "./index.js";
import { randomTensor } from "./test-helpers.js";
import { GpuOps, values } from "./test-gpu.js";
import { crossEntropy64 } from "./test-reference64.js";

const webgpu = createWebGpuExecutor();
const ops = new GpuOps(webgpu);
afterAll(() => webgpu.dispose());

const TOL = { abs: 1e-5, rel: 1e-5 };
const attrs = (reduction: "mean" | "sum" | "none", ignoreIndex: number | null = null): Record<string, unknown> => ({
  reduction,
  ignoreIndex,
});

describe("cross-entropy kernel vs float64", () => {
  for (const [label, shape] of [
    ["[N, V], V = 5", [6, 5]],
    ["[B, T, V], V = 150 (past one workgroup)", [2, 3, 150]],
  ] as const) {
    it(`${label}: mean, sum and none`, async () => {
      const v = shape[shape.length - 1]!;
      const logits = randomTensor([...shape], v, 3);
      const lead = shape.slice(0, -1);
      const t = Array.from({ length: lead.reduce((a, d) => a * d, 1) }, (_, k) => (k * 7 + 3) % v);
      const targets = Tensor.int32(t, lead);
      for (const reduction of ["mean", "sum", "none"] as const) {
        const out = reduction === "none" ? lead : [];
        const got = await ops.run("cross-entropy", attrs(reduction), [logits, targets], out);
        expect(got.shape).toEqual(out);
        const r = compare(got, crossEntropy64(values(logits), v, t, reduction), TOL);
        expect({ reduction, ok: r.ok, worst: r.worst }).toMatchObject({ ok: true });
      }
    });
  }

  it("ignoreIndex: ignored positions give 0 and are not counted in the mean; all ignored gives a mean and sum of 0", async () => {
    const logits = randomTensor([2, 3, 4], 11, 2);
    const t = [0, -100, 3, -100, 2, 1];
    const targets = Tensor.int32(t, [2, 3]);
    for (const reduction of ["mean", "sum", "none"] as const) {
      const got = await ops.run(
        "cross-entropy",
        attrs(reduction, -100),
        [logits, targets],
        reduction === "none" ? [2, 3] : [],
      );
      expect(compare(got, crossEntropy64(values(logits), 4, t, reduction, -100), TOL).ok, reduction).toBe(true);
    }
    const none = Tensor.int32(new Array<number>(6).fill(-100), [2, 3]);
    for (const reduction of ["mean", "sum"] as const) {
      const got = await ops.run("cross-entropy", attrs(reduction, -100), [logits, none], []);
      expect(got.shape).toEqual([]);
      expect(values(got)).toEqual([0]);
    }
    // An ignore index inside [0, V) is still ignored (it is a class nobody is scored on).
    const inRange = await ops.run(
      "cross-entropy",
      attrs("none", 3),
      [logits, Tensor.int32([0, 3, 3, 1, 2, 1], [2, 3])],
      [2, 3],
    );
    expect(values(inRange).map((v) => v === 0)).toEqual([false, true, true, false, false, false]);
  });

  it("strided logits (class axis not stride 1) and strided, offset targets on the GPU", async () => {
    const logits = randomTensor([3, 4, 9], 21, 2);
    const t = [0, 8, 4, 4, 1, 7, 2, 3, 6, 5, 8, 0];
    const targets = Tensor.int32(t, [3, 4]);
    const permuted = await ops.permuted(logits, [2, 0, 1]);
    expect(permuted.strides[2]).not.toBe(1);
    for (const [l, tv] of [
      [permuted, await ops.spaced(targets)],
      [await ops.spaced(logits), await ops.permuted(targets, [1, 0])],
    ] as const) {
      for (const reduction of ["mean", "none"] as const) {
        const got = await ops.run("cross-entropy", attrs(reduction), [l, tv], reduction === "none" ? [3, 4] : []);
        expect(compare(got, crossEntropy64(values(logits), 9, t, reduction), TOL).ok, reduction).toBe(true);
      }
    }
  });

  it("stable for logits of ±1e4; NaN and infinities propagate as IEEE math does", async () => {
    const huge = Tensor.from([1e4, 1e4 - 1, -1e4, 5, 1000, 0, -1000, 3], [2, 4]);
    const got = await ops.run("cross-entropy", attrs("none"), [huge, Tensor.int32([1, 0], [2])], [2]);
    expect(compare(got, crossEntropy64(values(huge), 4, [1, 0], "none"), TOL).ok).toBe(true);

    const special = Tensor.from([Number.NaN, 0, 1, /**/ Infinity, 0, 1, /**/ -Infinity, 0, 1, /**/ 1, 2, 3], [4, 3]);
    const per = values(await ops.run("cross-entropy", attrs("none"), [special, Tensor.int32([1, 1, 0, 2], [4])], [4]));
    // A NaN logit: NaN. A +inf logit (not the target): inf − inf = NaN. A −inf target: +inf. An ordinary row: finite.
    expect(per.slice(0, 3).map(String)).toEqual(["NaN", "NaN", "Infinity"]);
    expect(per[3]).toBeCloseTo(crossEntropy64([1, 2, 3], 3, [2], "none")[0]!, 6);
    const mean = values(await ops.run("cross-entropy", attrs("mean"), [special, Tensor.int32([1, 1, 0, 2], [4])], []));
    expect(Number.isNaN(mean[0])).toBe(true);
    // The NaN row ignored: the mean is over the rest.
    const ignored = values(
      await ops.run("cross-entropy", attrs("mean", -1), [special, Tensor.int32([-1, -1, -1, 2], [4])], []),
    );
    expect(ignored[0]).toBeCloseTo(crossEntropy64([1, 2, 3], 3, [2], "none")[0]!, 6);
  });

  it("a target outside [0, V) is an error naming node, position and value; the ignore index is allowed", async () => {
    const logits = randomTensor([2, 3, 4], 31);
    for (const [bad, ignore] of [
      [4, null],
      [-1, null],
      [-1, -100],
    ] as const) {
      const e = await ops.error(
        "cross-entropy",
        attrs("mean", ignore),
        [logits, Tensor.int32([0, 1, 2, 3, bad, 0], [2, 3])],
        [],
        "loss",
      );
      expect(e).toMatchObject({ code: "input", subject: "loss.targets", got: `${bad} at [1, 1]` });
    }
  });

  it("errors: shapes, attributes and dtypes name the node and field", async () => {
    const logits = randomTensor([2, 3, 4], 41);
    const targets = Tensor.int32([0, 1, 2, 3, 0, 1], [2, 3]);
    await expect(
      ops.error("cross-entropy", attrs("mean"), [logits, Tensor.int32([0, 1], [2])], [], "loss"),
    ).resolves.toMatchObject({ code: "shape", subject: "loss.targets" });
    await expect(
      ops.error("cross-entropy", attrs("mean"), [logits, Tensor.int32([0, 1, 2, 3], [2, 2])], [], "loss"),
    ).resolves.toMatchObject({ code: "shape", subject: "loss.targets" });
    await expect(
      ops.error("cross-entropy", attrs("mean"), [randomTensor([4], 42), Tensor.int32([0], [])], [], "loss"),
    ).resolves.toMatchObject({ code: "shape", subject: "loss.logits" });
    await expect(
      ops.error("cross-entropy", { reduction: "max", ignoreIndex: null }, [logits, targets], [], "loss"),
    ).resolves.toMatchObject({ code: "attr", subject: "loss.reduction" });
    await expect(ops.error("cross-entropy", attrs("mean", 0.5), [logits, targets], [], "loss")).resolves.toMatchObject({
      code: "attr",
      subject: "loss.ignoreIndex",
    });
    await expect(
      ops.error("cross-entropy", attrs("mean"), [logits, Tensor.from([0, 1, 2, 3, 0, 1], [2, 3])], [], "loss"),
    ).resolves.toMatchObject({
      code: "input",
      subject: "loss.targets",
      expected: "int32",
      got: "float32",
    });
    await expect(
      ops.error(
        "cross-entropy",
        attrs("mean"),
        [Tensor.int32(new Array<number>(24).fill(0), [2, 3, 4]), targets],
        [],
        "loss",
      ),
    ).resolves.toMatchObject({
      code: "input",
      subject: "loss.logits",
      expected: "float32",
      got: "int32",
    });
  });
});
