// A lost device fails the run that notices it (an error event from the runtime), and the next run works on a new
// device with the session's weights uploaded again from their host tensors; a decode session's caches (written in
// place) died with the device, and its reset() makes new ones.
import { afterAll, describe, expect, it } from "vitest";
import { multiHeadAttention } from "@attngraph/attention";
import { compileDecoder, type SessionEvent } from "@attngraph/runtime";
import { Tensor, compare, type AnyTensor } from "@attngraph/tensor";
import { createWebGpuExecutor, isDeviceLost } from "./index.js";
import { attentionSession, randomTensor } from "./test-helpers.js";

describe("device loss", () => {
  const webgpu = createWebGpuExecutor();
  afterAll(() => webgpu.dispose());

  it("rejects the run that meets a lost device, emits run-error, and the next run re-creates the device", async () => {
    const session = await attentionSession(webgpu);
    const events: SessionEvent[] = [];
    session.events$.subscribe((e) => events.push(e));
    const x = randomTensor([2, 4, 8], 3);
    const first = (await session.run({ x }))["output"]!;
    const lost = webgpu.device!;
    lost.destroy();
    await lost.lost;

    const error = await session.run({ x }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isDeviceLost(error), `expected a device-lost error, got ${String(error)}`).toBe(true);
    expect(events.filter((e) => e.type === "run-error")).toHaveLength(1);

    const again = (await session.run({ x }))["output"]!;
    expect(webgpu.device).not.toBe(lost);
    expect(webgpu.stats.devices).toBe(2);
    expect(compare(again, first, { abs: 1e-6, rel: 1e-6 }).ok, "the same output on the new device").toBe(true);
    expect(events.at(-1)?.type).toBe("run-end");
    await session.dispose();
  });

  it("a decode session: the step that meets the loss fails, so does the next (its caches died), reset() decodes again", async () => {
    const graph = multiHeadAttention({ dIn: 8, dOut: 8, numHeads: 2, causal: true }, { decode: true });
    const weights: Record<string, Tensor> = {};
    for (const [i, w] of graph.weights.entries())
      if (!w.name.endsWith(".cache.state")) weights[w.name] = randomTensor(w.shape as number[], 100 + i, 0.5);
    const owner = createWebGpuExecutor();
    await owner.init();
    const device = owner.device!;
    const ex = createWebGpuExecutor({ device });
    const decoder = await compileDecoder(graph, { executors: [ex], weights, maxLength: 8, batch: 1 });
    const prompt = randomTensor([1, 3, 8], 4);
    const token = randomTensor([1, 1, 8], 5);
    const first = (await decoder.step({ x: prompt }))["output"]!;
    const second = (await decoder.step({ x: token }))["output"]!;
    device.destroy();
    await device.lost;
    const error = await decoder.step({ x: token }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isDeviceLost(error), `expected a device-lost error, got ${String(error)}`).toBe(true);
    const stale = await decoder.step({ x: token }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isDeviceLost(stale), `the cache from the lost device: ${String(stale)}`).toBe(true);
    decoder.reset();
    expect(compare((await decoder.step({ x: prompt }))["output"]!, first, { abs: 1e-6, rel: 1e-6 }).ok).toBe(true);
    expect(compare((await decoder.step({ x: token }))["output"]!, second, { abs: 1e-6, rel: 1e-6 }).ok).toBe(true);
    await decoder.dispose();
    await ex.dispose();
    await owner.dispose();
  });

  it("a lost device given by the user is replaced by a requested one", async () => {
    const owner = createWebGpuExecutor();
    await owner.init();
    const userDevice = owner.device!;
    const ex = createWebGpuExecutor({ device: userDevice });
    await ex.init();
    expect(ex.device).toBe(userDevice);
    const t = await ex.upload(randomTensor([3], 1));
    userDevice.destroy();
    await userDevice.lost;
    await expect(ex.download(t)).rejects.toMatchObject({ code: "device-lost" });
    const back = await ex.download(t); // an upload survives: it is re-uploaded from its host tensor
    expect(Array.from(back.toFloat32Array())).toEqual(Array.from(randomTensor([3], 1).toFloat32Array()));
    expect(ex.device).not.toBe(userDevice);
    await ex.dispose();
    await owner.dispose();
  });

  it("an int32 upload survives a device loss: it is uploaded again from its host tensor, as i32", async () => {
    // Integers whose bits are a NaN and a denormal as float32: a re-upload through f32 could change them.
    const ints = [0x7fc00001, 1, -1, 2 ** 31 - 1];
    const owner = createWebGpuExecutor();
    await owner.init();
    const device = owner.device!;
    const ex = createWebGpuExecutor({ device });
    const v = await ex.upload(Tensor.int32(ints, [ints.length]));
    device.destroy();
    await device.lost;
    await expect(ex.download(v)).rejects.toMatchObject({ code: "device-lost" });
    const back = (await ex.download(v)) as AnyTensor;
    expect(back.dtype).toBe("int32");
    expect(Array.from(back.toInt32Array())).toEqual(ints);
    await ex.dispose();
    await owner.dispose();
  });
});
