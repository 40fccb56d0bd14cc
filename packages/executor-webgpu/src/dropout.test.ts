// The WGSL copy of the dropout generator (DROPOUT_WGSL) gives the bits of the one TypeScript implementation
// (@attngraph/graph's dropoutBits), run on the device over seeds and counters across the uint32 range; the dropout
// mask is bit-identical to the CPU executor's, both for the dropout kernel and inside the fused attention kernel.
import { afterAll, describe, expect, it } from "vitest";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { dropoutBits, dropoutKeep } from "@attngraph/graph";
import { dropoutProbe } from "@attngraph/testkit";
import { Tensor } from "@attngraph/tensor";
import { DROPOUT_WGSL } from "./kernels/dropout.wgsl.js";
import { createWebGpuExecutor } from "./index.js";
import { randomTensor } from "./test-helpers.js";
import { runWgsl } from "./test-wgsl.js";

const webgpu = createWebGpuExecutor();
const cpu = createCpuExecutor();
afterAll(() => webgpu.dispose());

async function onGpu(
  kind: string,
  attrs: Record<string, unknown>,
  inputs: (Tensor | undefined)[],
  outShape: number[],
): Promise<Tensor> {
  const values = await Promise.all(inputs.map((t) => (t ? webgpu.upload(t) : undefined)));
  return webgpu.download(await webgpu.dispatch({ kind, node: `test.${kind}`, attrs, inputs: values, outShape }));
}

const firstDifference = (a: Float32Array, b: Float32Array): number => a.findIndex((v, i) => !Object.is(v, b[i]));

/** dropout_bits(fmix32(seed), i) of DROPOUT_WGSL on the device, for each (seed, i) pair: the full 32 bits, not a mask. */
async function wgslBits(pairs: Uint32Array<ArrayBuffer>): Promise<Uint32Array> {
  const n = pairs.length / 2;
  const code = /* wgsl */ `${DROPOUT_WGSL}
@group(0) @binding(0) var<storage, read> pairs: array<vec2u>;
@group(0) @binding(1) var<storage, read_write> bits: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x >= arrayLength(&bits)) { return; }
  bits[g.x] = dropout_bits(fmix32(pairs[g.x].x), pairs[g.x].y);
}`;
  return new Uint32Array(await runWgsl(webgpu, code, pairs, n * 4, n));
}

describe("the WGSL generator vs @attngraph/graph's dropoutBits", () => {
  it("the same 32 bits for 64 seeds × 1,100 counters (near 0, around 2³¹, below 2³², and spread between)", async () => {
    const { seeds, counters } = dropoutProbe();
    const pairs = new Uint32Array(seeds.length * counters.length * 2);
    let p = 0;
    for (const seed of seeds) for (const i of counters) (pairs[p++] = seed), (pairs[p++] = i);
    const got = await wgslBits(pairs);
    const mismatches: string[] = [];
    for (let k = 0; k < got.length; k++) {
      const [seed, i] = [pairs[2 * k]!, pairs[2 * k + 1]!];
      if (got[k] !== dropoutBits(seed, i))
        mismatches.push(`seed ${seed}, i ${i}: ${got[k]} vs ${dropoutBits(seed, i)}`);
    }
    expect(got.length).toBe(64 * 1100);
    expect(mismatches.slice(0, 5)).toEqual([]);
  });
});

describe("dropout on webgpu vs cpu", () => {
  for (const [seed, rate] of [
    [0, 0.5],
    [42, 0.1],
    [0xffffffff, 0.3],
    [123456789, 0.9],
  ] as const) {
    it(`dropout kernel: the same bits as cpu (seed ${seed}, rate ${rate}), on a strided view too`, async () => {
      const x = randomTensor([3, 5, 7, 11], seed % 997);
      for (const input of [x, x.permute([3, 1, 2, 0])]) {
        const attrs = { rate, seed, training: true };
        const got = (await onGpu("dropout", attrs, [input], [...input.shape])).toFloat32Array();
        const want = cpu
          .dispatch({ kind: "dropout", node: "d", attrs, inputs: [input], outShape: input.shape })
          .toFloat32Array();
        expect(firstDifference(got, want)).toBe(-1);
        const wrongMask = Array.from(got).findIndex((v, i) => (v !== 0) !== dropoutKeep(seed, i, rate));
        expect(wrongMask).toBe(-1);
      }
    });
  }

  it("fused attention with dropout drops the same weights as the cpu kernel", async () => {
    const [B, H, L, S, D] = [2, 2, 5, 70, 4];
    // v = one-hot per key (Dv = S): context[b, h, i, j] is then exactly weight [b, h, i, j], dropped ones are 0.
    const q = randomTensor([B, H, L, D], 11);
    const k = randomTensor([B, H, S, D], 12);
    const eye = new Float32Array(B * H * S * S);
    for (let m = 0; m < B * H; m++) for (let j = 0; j < S; j++) eye[(m * S + j) * S + j] = 1;
    const v = new Tensor(eye, [B, H, S, S]);
    const attrs = {
      causal: false,
      window: null,
      alignment: "top-left",
      scale: 0.5,
      dropoutRate: 0.4,
      dropoutSeed: 7,
      training: true,
    };
    const got = (await onGpu("attention", attrs, [q, k, v, undefined], [B, H, L, S])).toFloat32Array();
    const want = cpu
      .dispatch({ kind: "attention", node: "a", attrs, inputs: [q, k, v, undefined], outShape: [B, H, L, S] })
      .toFloat32Array();
    const zerosDiffer = Array.from(got).findIndex((g, i) => (g === 0) !== (want[i] === 0));
    expect(zerosDiffer, "first weight dropped on one executor only").toBe(-1);
    expect(Array.from(got).filter((g) => g === 0).length).toBeGreaterThan(B * H * L * S * 0.3);
    const worst = Math.max(...Array.from(got, (g, i) => Math.abs(g - want[i]!)));
    expect(worst).toBeLessThan(1e-5);
  });
});
