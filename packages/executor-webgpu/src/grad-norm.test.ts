// The webgpu side of clipping, accumulation and the learning-rate factor that the contract checks (testkit
// clip-checks.ts) cannot reach from the host: values computed on the GPU. A clip total, a micro step k or an lrScale
// made by another kernel is read in the shader, never read back; a bad k or lrScale made there turns every output
// element NaN (a kernel cannot throw from the GPU), and a NaN total makes every clipped gradient NaN, as torch's does.
import { afterAll, describe, expect, it } from "vitest";
import { Tensor, compare } from "@attngraph/tensor";
import { createWebGpuExecutor } from "./index.js";
import type { GpuTensor } from "./gpu-tensor.js";
import { randomTensor } from "./test-helpers.js";
import { GpuOps, values } from "./test-gpu.js";

const webgpu = createWebGpuExecutor();
const ops = new GpuOps(webgpu);
afterAll(() => webgpu.dispose());

/** A one-element value computed on the GPU (a sum of two uploads), so the executor holds no host copy of it. */
function onGpu(x: number, shape: number[] = [1]): Promise<GpuTensor> {
  const half = Tensor.from([x / 2], shape);
  return ops.dispatch("add", {}, [half, half], shape);
}

describe("clipping, accumulation and lrScale from values computed on the GPU", () => {
  it("sum-squares → clip-by-norm, grad-accumulate over GPU-made k, adam-step with a GPU-made lrScale: no readback", async () => {
    const g = randomTensor([5, 7], 3);
    const gv = (await ops.value(g))!;
    const readbacks = webgpu.stats.readbacks;
    const total = await ops.dispatch("sum-squares", {}, [gv], [1]);
    const clipped = await ops.dispatch("clip-by-norm", { maxNorm: 0.5, eps: 1e-6 }, [gv, total], [5, 7]);
    const acc1 = await ops.dispatch("grad-accumulate", { scale: 0.5 }, [clipped, clipped, await onGpu(1)], [5, 7]);
    const acc2 = await ops.dispatch("grad-accumulate", { scale: 0.5 }, [acc1, clipped, await onGpu(2, [])], [5, 7]);
    const v = (await ops.value(
      Tensor.from(
        values(g).map((x) => x * x),
        [5, 7],
      ),
    ))!; // a second moment is >= 0
    const p = await ops.dispatch("adam-step", { lr: 0.1 }, [gv, acc2, v, await onGpu(1), await onGpu(0)], [5, 7]);
    expect(webgpu.stats.readbacks).toBe(readbacks);
    const norm = Math.sqrt(values(g).reduce((s, x) => s + x * x, 0));
    const want = values(g).map((x) => x * Math.min(1, 0.5 / (norm + 1e-6)));
    const r = compare(await webgpu.download(acc2), want, { abs: 1e-6, rel: 1e-5 });
    expect(r.ok, JSON.stringify(r.worst)).toBe(true);
    // lrScale 0: the parameter is left exactly as it was.
    expect(values(await webgpu.download(p))).toEqual(values(g));
  });

  it("a bad k or lrScale computed on the GPU makes every output NaN; a NaN total, every clipped gradient", async () => {
    const g = randomTensor([3, 4], 5);
    for (const k of [0, 1.5, Number.NaN]) {
      const got = await ops.run("grad-accumulate", { scale: 1 }, [g, g, await onGpu(k)], [3, 4]);
      expect(values(got).every(Number.isNaN), `k ${k}`).toBe(true);
    }
    for (const s of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      const got = await ops.run(
        "adam-step",
        { lr: 0.1 },
        [g, g, g.contiguous(), await onGpu(1), await onGpu(s)],
        [3, 4],
      );
      expect(values(got).every(Number.isNaN), `lrScale ${s}`).toBe(true);
    }
    const got = await ops.run("clip-by-norm", { maxNorm: 1 }, [g, await onGpu(Number.NaN)], [3, 4]);
    expect(values(got).every(Number.isNaN)).toBe(true);
  });
});
