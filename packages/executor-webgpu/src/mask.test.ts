// The mask kernel's user mask, additive bias and scale against a float64 mask: a 0/1 mask of each rank ([L, S],
// [B, L, S], [B, H, L, S]) with broadcast dims of 1, composed by "or" with causal, window and padding; strided user
// inputs on the GPU; a bias with −∞ entries after the scale; scores already −∞ stay −∞. Without scale or bias a
// visible score passes through bit for bit. Mask values other than 0/1 (2, NaN, 0.5) and wrong shapes are errors
// naming the node, the input and the element.
import { afterAll, describe, expect, it } from "vitest";
import { Tensor, compare } from "@attngraph/tensor";
import { createWebGpuExecutor } from "./index.js";
import { randomTensor } from "./test-helpers.js";
import { GpuOps, type Input } from "./test-gpu.js";
import { mask64, type MaskRef } from "./test-reference64.js";

const webgpu = createWebGpuExecutor();
const ops = new GpuOps(webgpu);
afterAll(() => webgpu.dispose());

const values = (t: Tensor): number[] => Array.from(t.toFloat32Array());
const B = 2;
const H = 3;

/** A seeded 0/1 tensor with about a quarter zeros. */
function zeroOne(shape: number[], seed: number): Tensor {
  return Tensor.from(
    Array.from(randomTensor(shape, seed).toFloat32Array(), (v) => (v < -0.5 ? 0 : 1)),
    shape,
  );
}

function attrs(
  a: { causal?: boolean; window?: number | null; alignment?: string; scale?: number } = {},
): Record<string, unknown> {
  return { causal: false, window: null, alignment: "top-left", scale: 1, ...a };
}

async function expectMask(
  scores: Tensor,
  inputs: [Input, Input, Input],
  a: Record<string, unknown>,
  ref: MaskRef,
  tol = { abs: 0, rel: 0 },
): Promise<void> {
  const got = await ops.run("mask", a, [scores, ...inputs], scores.shape);
  const r = compare(got, mask64(values(scores), scores.shape, ref), tol);
  expect({ ok: r.ok, worst: r.worst }).toMatchObject({ ok: true });
}

describe("mask kernel: user mask", () => {
  const [L, S] = [4, 5];
  const shapes: [string, number[]][] = [
    ["[L, S]", [L, S]],
    ["[1, S] (every query)", [1, S]],
    ["[B, L, S]", [B, L, S]],
    ["[B, 1, S]", [B, 1, S]],
    ["[1, L, 1] (whole query rows)", [1, L, 1]],
    ["[B, H, L, S]", [B, H, L, S]],
    ["[1, H, 1, S] (per head)", [1, H, 1, S]],
    ["[B, 1, L, S]", [B, 1, L, S]],
  ];
  for (const [label, shape] of shapes) {
    it(`${label}, alone and composed with causal + window + padding; exact`, async () => {
      const scores = randomTensor([B, H, L, S], shape.length * 10 + shape[0]!, 3);
      const user = zeroOne(shape, shape.length + 100 * shape[shape.length - 1]!);
      await expectMask(scores, [undefined, user, undefined], attrs(), { user: { data: values(user), shape } });
      const pad = Tensor.from([0, 0, 0, 1, 1, 1, 0, 0, 0, 0], [B, S]);
      const composed = attrs({ causal: true, window: 3, alignment: "bottom-right" });
      await expectMask(scores, [pad, user, undefined], composed, {
        causal: true,
        window: 3,
        bottomRight: true,
        pad: values(pad),
        user: { data: values(user), shape },
      });
    });
  }

  it("user mask and bias as strided and offset GPU views; a mask computed on the GPU is read back once for its check", async () => {
    const scores = randomTensor([B, H, L, S], 7);
    const user = zeroOne([B, L, S], 8);
    const bias = randomTensor([L, S], 9);
    const ref: MaskRef = {
      causal: true,
      scale: 0.25,
      user: { data: values(user), shape: [B, L, S] },
      bias: { data: values(bias), shape: [L, S] },
    };
    const before = webgpu.stats.readbacks;
    await expectMask(
      scores,
      [undefined, await ops.permuted(user, [2, 0, 1]), await ops.spaced(bias)],
      attrs({ causal: true, scale: 0.25 }),
      ref,
      { abs: 1e-6, rel: 1e-6 },
    );
    expect(webgpu.stats.readbacks - before, "the strided mask's check and the result").toBe(2);
    const uploaded = webgpu.stats.readbacks;
    await expectMask(scores, [undefined, user, bias], attrs({ causal: true, scale: 0.25 }), ref, {
      abs: 1e-6,
      rel: 1e-6,
    });
    expect(webgpu.stats.readbacks - uploaded, "an uploaded mask is checked from its host copy").toBe(1);
  });
});

describe("mask kernel: bias and scale", () => {
  const [L, S] = [5, 5];

  it("scale · score + bias with −∞ bias entries, every bias rank, composed with causal and a user mask", async () => {
    const scores = randomTensor([B, H, L, S], 21, 2);
    const user = zeroOne([L, S], 22);
    for (const shape of [
      [L, S],
      [B, 1, S],
      [1, H, L, 1],
      [B, H, L, S],
    ]) {
      const bias = Tensor.from(
        Array.from(randomTensor(shape, shape.length + 30).toFloat32Array(), (v) => (v > 0.7 ? -Infinity : v)),
        shape,
      );
      expect(values(bias)).toContain(-Infinity);
      await expectMask(
        scores,
        [undefined, user, bias],
        attrs({ causal: true, scale: 0.125 }),
        {
          causal: true,
          scale: 0.125,
          user: { data: values(user), shape: [L, S] },
          bias: { data: values(bias), shape },
        },
        { abs: 1e-6, rel: 1e-6 },
      );
    }
  });

  it("a score already −∞ stays −∞ whatever the scale and bias (even +∞); NaN in a visible bias propagates", async () => {
    const scores = Tensor.from([-Infinity, 1, 2, -Infinity], [1, 1, 2, 2]);
    const bias = Tensor.from([Infinity, Number.NaN, 0.5, 1], [2, 2]);
    const got = values(await ops.run("mask", attrs({ scale: -2 }), [scores, undefined, undefined, bias], [1, 1, 2, 2]));
    expect(got.map(String)).toEqual(["-Infinity", "NaN", "-3.5", "-Infinity"]);
  });

  it("scale 1 without bias leaves visible scores bit for bit (−0, a denormal, NaN); only the scale changes them", async () => {
    const scores = Tensor.from([-0, 1e-40, Number.NaN, 3], [1, 1, 1, 4]);
    const same = await ops.run("mask", attrs(), [scores, undefined, undefined, undefined], [1, 1, 1, 4]);
    const got = same.toFloat32Array();
    expect(Object.is(got[0], -0)).toBe(true);
    expect(new Uint32Array(got.buffer)[1]).toBe(new Uint32Array(scores.toFloat32Array().buffer)[1]);
    expect(Number.isNaN(got[2])).toBe(true);
    const scaled = values(
      await ops.run("mask", attrs({ scale: 0.5 }), [scores, undefined, undefined, undefined], [1, 1, 1, 4]),
    );
    expect(scaled[3]).toBe(1.5);
  });
});

describe("mask kernel: errors", () => {
  const scores = randomTensor([1, 2, 2, 3], 41);
  for (const [label, value] of [
    ["2", 2],
    ["NaN", Number.NaN],
    ["0.5", 0.5],
    ["-1", -1],
  ] as const) {
    it(`a user mask value of ${label} is an error naming <node>.mask and the element`, async () => {
      const user = Tensor.from([1, 1, 0, 1, value, 1], [2, 3]);
      await expect(
        ops.error("mask", attrs(), [scores, undefined, user, undefined], [1, 2, 2, 3], "blocks.0.attn.mask"),
      ).resolves.toMatchObject({
        code: "input",
        subject: "blocks.0.attn.mask.mask",
        got: `${value} at [1, 1]`,
      });
    });
  }

  it("wrong rank or dims of mask and bias name the input; an int32 mask names its slot; a bad scale is an attr error", async () => {
    const node = "m";
    await expect(
      ops.error(
        "mask",
        attrs(),
        [scores, undefined, Tensor.from(new Array<number>(6).fill(1), [3, 2]), undefined],
        [1, 2, 2, 3],
        node,
      ),
    ).resolves.toMatchObject({
      code: "shape",
      subject: "m.mask",
    });
    await expect(
      ops.error("mask", attrs(), [scores, undefined, Tensor.from([1, 1, 1], [3]), undefined], [1, 2, 2, 3], node),
    ).resolves.toMatchObject({ code: "shape", subject: "m.mask" });
    await expect(
      ops.error("mask", attrs(), [scores, undefined, undefined, randomTensor([1, 3, 2, 3], 42)], [1, 2, 2, 3], node),
    ).resolves.toMatchObject({ code: "shape", subject: "m.bias" });
    await expect(
      ops.error("mask", attrs(), [scores, undefined, undefined, randomTensor([2, 1, 1, 1, 3], 43)], [1, 2, 2, 3], node),
    ).resolves.toMatchObject({ code: "shape", subject: "m.bias" });
    await expect(
      ops.error("mask", attrs(), [scores, undefined, Tensor.int32([1, 1, 1], [1, 3]), undefined], [1, 2, 2, 3], node),
    ).resolves.toMatchObject({
      code: "input",
      subject: "m.mask",
      expected: "float32",
      got: "int32",
    });
    await expect(
      ops.error("mask", attrs({ scale: Number.NaN }), [scores, undefined, undefined, undefined], [1, 2, 2, 3], node),
    ).resolves.toMatchObject({ code: "attr", subject: "m.scale" });
  });
});
