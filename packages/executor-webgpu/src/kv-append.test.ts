// kv-append on the device: two appends into one cache value (the second run passes the same value again) give views of
// the cache's own buffer whose values are the concatenation, with positions past past + L untouched; both write paths
// (copyBufferToBuffer for dense blocks, the scatter program for x with its heads split, spaced x and a strided cache);
// the order against programs before and after it; the cache's host tensor forgotten once written (a device loss is then
// an error, not the upload-time contents). What every executor must do (shift, the bad calls every executor refuses,
// x a view of the cache) is reliability's kv-append test.
import { afterAll, describe, expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import { KV_SENTINEL, kvAppendCall, kvConcat, sentinelTensor } from "@attngraph/testkit";
import { acquireDevice } from "./device.js";
import { createWebGpuExecutor, type GpuTensor } from "./index.js";
import { randomTensor } from "./test-helpers.js";
import { GpuOps } from "./test-gpu.js";

const webgpu = createWebGpuExecutor();
const ops = new GpuOps(webgpu);
afterAll(() => webgpu.dispose());

const [B, H, M, D] = [2, 3, 6, 4];
const append = (cache: GpuTensor, x: GpuTensor, past: unknown, node?: string) =>
  webgpu.dispatch(kvAppendCall(cache, x, past, node));

const values = async (v: GpuTensor) => Array.from((await webgpu.download(v)).contiguous().toFloat32Array());

describe("kv-append on webgpu", () => {
  it("two appends into one cache (scatter, then copy): views of its buffer holding the concatenation", async () => {
    const cache = await webgpu.upload(sentinelTensor([B, H, M, D]));
    // First call (a prefill): L = 3, heads split from [B, L, H, D], so each (b, h) is not one run: the scatter program.
    const x1 = randomTensor([B, H, 3, D], 1);
    const v1 = await ops.permuted(x1, [0, 2, 1, 3]);
    const y1 = await append(cache, v1, 0);
    expect(y1.shape).toEqual([B, H, 3, D]);
    expect([y1.storage, y1.strides, y1.offset]).toEqual([cache.storage, cache.strides, cache.offset]);
    expect(await values(y1)).toEqual(Array.from(x1.toFloat32Array()));
    webgpu.release(y1);
    // Second call, the same cache value again: x dense, one copyBufferToBuffer per (b, h).
    const x2 = randomTensor([B, H, 2, D], 2);
    const v2 = await webgpu.upload(x2);
    const y2 = await append(cache, v2, 3);
    expect(y2.shape).toEqual([B, H, 5, D]);
    expect(await values(y2)).toEqual(kvConcat(x1, x2));
    expect(await values(cache)).toEqual(kvConcat(x1, x2, M - 5)); // position 5 was never written
    for (const v of [v1, y2, v2, cache]) webgpu.release(v);
  });

  it("a cache at an offset (copy path), a strided cache and spaced x (scatter), and L = 0", async () => {
    // The cache: positions 1..M of a [B, H, M + 2, D] buffer, so it starts at an offset and skips a row at either end.
    const big = await webgpu.upload(sentinelTensor([B, H, M + 2, D]));
    const cache = await ops.dispatch("slice", { axis: 2, start: 1, size: M }, [big], [B, H, M, D]);
    const x = randomTensor([B, H, 1, D], 3);
    const vx = await webgpu.upload(x);
    webgpu.release(await append(cache, vx, 2));
    const rows = sentinelTensor([B, H, 3, D]);
    expect(await values(big)).toEqual(kvConcat(rows, x, M - 3 + 1));
    // Stored [B, H, D, M] (last stride M), written from x whose every stride is doubled and that starts at an offset.
    const strided = await ops.permuted(sentinelTensor([B, H, M, D]), [0, 1, 3, 2]);
    const xs = randomTensor([B, H, 2, D], 4);
    const spaced = await ops.spaced(xs);
    const y = await append(strided, spaced, 1);
    expect(y.strides).toEqual(strided.strides);
    expect(await values(strided)).toEqual(kvConcat(sentinelTensor([B, H, 1, D]), xs, M - 3));
    const empty = await webgpu.upload(new Tensor(new Float32Array(0), [B, H, 0, D]));
    const y0 = await append(strided, empty, 3);
    expect(y0.shape).toEqual([B, H, 3, D]);
    expect(await values(strided)).toEqual(kvConcat(sentinelTensor([B, H, 1, D]), xs, M - 3));
    for (const v of [vx, spaced, empty, y, y0, strided, cache, big]) webgpu.release(v);
  });

  it("is ordered with the programs around it: a read before sees the old rows, a read after the new ones", async () => {
    const cache = await webgpu.upload(sentinelTensor([1, 1, M, D]));
    const before = await ops.dispatch("gelu", { approximate: "none" }, [cache], cache.shape);
    const x = randomTensor([1, 1, M, D], 5);
    const vx = await webgpu.upload(x);
    const y = await append(cache, vx, 0);
    const after = await ops.dispatch("gelu", { approximate: "none" }, [y], y.shape);
    const gelu = async (t: Tensor) => ops.run("gelu", { approximate: "none" }, [t], t.shape);
    expect(await values(before)).toEqual(Array.from((await gelu(sentinelTensor([1, 1, M, D]))).toFloat32Array()));
    expect(await values(after)).toEqual(Array.from((await gelu(x)).toFloat32Array()));
    for (const v of [before, after, vx, y, cache]) webgpu.release(v);
  });

  it("after a device loss, a cache written in place is an error, not re-uploaded as it was", async () => {
    // A device of its own (not the shared one the other tests use), lost on purpose.
    const { device } = await acquireDevice();
    const ex = createWebGpuExecutor({ device });
    const cache = await ex.upload(sentinelTensor([1, 1, M, D]));
    const untouched = await ex.upload(sentinelTensor([1, 1, M, D]));
    const x = await ex.upload(randomTensor([1, 1, 1, D], 6));
    ex.release(
      await ex.dispatch({
        kind: "kv-append",
        node: "k.cache",
        attrs: { past: 0, length: "S" },
        inputs: [cache, x],
        outShape: [1, 1, 1, D],
      }),
    );
    device.destroy();
    await device.lost;
    await expect(ex.download(untouched)).rejects.toMatchObject({ code: "device-lost" }); // the loss, reported once
    expect(Array.from((await ex.download(untouched)).toFloat32Array()).every((v) => v === KV_SENTINEL)).toBe(true);
    await expect(ex.download(cache)).rejects.toMatchObject({ code: "device-lost" });
    await ex.dispose();
  });
});
