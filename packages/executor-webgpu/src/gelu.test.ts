// GELU on the device: the WGSL erf, erfc and Φ (erf.wgsl.ts) measured against a float64 erf over a dense grid, then the
// gelu kernel in both forms against float64 over -10..10, the extremes (no NaN from tanh or x³ overflow), the tails
// (where 1 + erf would cancel), a strided input, and the errors.
import { afterAll, describe, expect, it } from "vitest";
import { Tensor, compare } from "@attngraph/tensor";
import { ERF_WGSL } from "./kernels/erf.wgsl.js";
import { createWebGpuExecutor } from "./index.js";
import { randomTensor } from "./test-helpers.js";
import { GpuOps } from "./test-gpu.js";
import { runWgsl } from "./test-wgsl.js";
import { erf64, erfc64, gelu64 } from "./test-reference64.js";

const webgpu = createWebGpuExecutor();
const ops = new GpuOps(webgpu);
afterAll(() => webgpu.dispose());

/** `fn(x)` of ERF_WGSL evaluated on the device for each input. */
async function wgsl(fn: string, xs: Float32Array<ArrayBuffer>): Promise<Float32Array> {
  const code = /* wgsl */ `${ERF_WGSL}
@group(0) @binding(0) var<storage, read> xs: array<f32>;
@group(0) @binding(1) var<storage, read_write> ys: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x >= arrayLength(&ys)) { return; }
  ys[g.x] = ${fn}(xs[g.x]);
}`;
  return new Float32Array(await runWgsl(webgpu, code, xs, xs.byteLength, xs.length));
}

/** The largest |got − want| and where, with want in float64 of the float32 inputs. */
function worstAbs(xs: Float32Array, got: Float32Array, want: (x: number) => number): { err: number; at: number } {
  let worst = { err: 0, at: Number.NaN };
  xs.forEach((x, k) => {
    const err = Math.abs(got[k]! - want(x));
    if (!(err <= worst.err)) worst = { err, at: x };
  });
  return worst;
}

describe("WGSL erf, erfc and Φ vs float64", () => {
  // Every 1/1024 over [-7, 7], plus the tiny and the far.
  const grid = Float32Array.from([
    ...Array.from({ length: 14 * 1024 + 1 }, (_, k) => -7 + k / 1024),
    1e-30,
    -1e-30,
    1e-7,
    -1e-7,
    0,
    30,
    -30,
    1e6,
    -1e6,
  ]);

  it("erf: absolute error below 1e-6 everywhere, odd, and relative error below 1e-6 near 0", async () => {
    const got = await wgsl("erf", grid);
    expect(worstAbs(grid, got, erf64).err).toBeLessThan(1e-6);
    const tiny = Float32Array.from([1e-30, 1e-10, 1e-4, 0.01, 0.3]);
    const small = await wgsl("erf", tiny);
    tiny.forEach((x, k) => expect(Math.abs(small[k]! / erf64(x) - 1)).toBeLessThan(1e-6));
    expect(got[grid.indexOf(0)]).toBe(0);
  });

  it("erfc: absolute error below 1e-6, and relative error below 1e-5 in the upper tail up to erfc(9) ≈ 4e-37", async () => {
    const got = await wgsl("erfc", grid);
    expect(worstAbs(grid, got, (x) => 1 - erf64(x)).err).toBeLessThan(1e-6);
    const tail = Float32Array.from(Array.from({ length: 81 }, (_, k) => 1 + k * 0.1));
    const t = await wgsl("erfc", tail);
    const rel = Math.max(...Array.from(tail, (x, k) => Math.abs(t[k]! / erfc64(x) - 1)));
    expect(rel).toBeLessThan(1e-5);
  });

  it("Φ: the lower tail keeps its relative accuracy (no 1 + erf cancellation) down to Φ(-12.5) ≈ 4e-36", async () => {
    // Not further: below ≈ 1.2e-38 float32 is denormal, which GPUs may flush to 0. The bound is 5e-5, not 1e-5: Φ's
    // relative condition there is about x² ≈ 156, so rounding x/√2 to float32 alone costs 1e-5.
    const xs = Float32Array.from(Array.from({ length: 126 }, (_, k) => -k * 0.1));
    const got = await wgsl("normal_cdf", xs);
    const errs = Array.from(xs, (x, k) => Math.abs(got[k]! / (0.5 * erfc64(-x / Math.SQRT2)) - 1));
    expect(Math.max(...errs)).toBeLessThan(5e-5);
    expect(Math.max(...errs.slice(0, 41)), "down to Φ(-4)").toBeLessThan(2e-6);
  });
});

describe("gelu kernel vs float64", () => {
  const line = [...Array.from({ length: 401 }, (_, i) => -10 + i * 0.05), -1e-3, 1e-3, 1e-20, -1e-20, 0];
  for (const approximate of ["none", "tanh"] as const) {
    it(`${approximate}: -10..10 within 2e-6 absolute + 1e-5 relative; large |x| gives x or 0, never NaN`, async () => {
      const x = Tensor.from(line, [line.length]);
      const got = await ops.run("gelu", { approximate }, [x], x.shape);
      const want = Array.from(x.toFloat32Array(), (v) => gelu64(v, approximate));
      const r = compare(got, want, { abs: 2e-6, rel: 1e-5 });
      expect({ ok: r.ok, worst: r.worst }).toMatchObject({ ok: true });
      const far = [30, -30, 1e4, -1e4, 3e38, -3e38, 1e20, -1e20];
      const big = Array.from(
        (await ops.run("gelu", { approximate }, [Tensor.from(far, [far.length])], [far.length])).toFloat32Array(),
      );
      far.forEach((v, k) => expect(big[k], `gelu(${v})`).toBeCloseTo(v > 0 ? Math.fround(v) : 0, 5));
    });

    it(`${approximate}: a strided, offset input on the GPU; NaN stays NaN`, async () => {
      const x = randomTensor([5, 6], 7, 4);
      const want = Array.from(x.toFloat32Array(), (v) => gelu64(v, approximate));
      for (const input of [await ops.permuted(x, [1, 0]), await ops.spaced(x)]) {
        const got = await ops.run("gelu", { approximate }, [input], [5, 6]);
        expect(compare(got, want, { abs: 2e-6, rel: 1e-5 }).ok).toBe(true);
      }
      const nan = await ops.run("gelu", { approximate }, [Tensor.from([Number.NaN, 1], [2])], [2]);
      expect(Number.isNaN(nan.toFloat32Array()[0]!)).toBe(true);
    });
  }

  it("errors: an unknown approximate, an int32 x", async () => {
    await expect(
      ops.error("gelu", { approximate: "fast" }, [Tensor.from([1], [1])], [1], "mlp.act"),
    ).resolves.toMatchObject({ code: "attr", subject: "mlp.act.approximate" });
    await expect(
      ops.error("gelu", { approximate: "none" }, [Tensor.int32([1], [1])], [1], "mlp.act"),
    ).resolves.toMatchObject({ code: "input", subject: "mlp.act.x", expected: "float32", got: "int32" });
  });
});
