// The executor's own behaviour around the kernels: detection that never throws early, the no-adapter error, errors
// from WebGPU error scopes naming the node, release/pooling, and dispose() winning over a pending init().
import { afterAll, describe, expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { Params, PRELUDE, WebGpuExecutor, createWebGpuExecutor, storageBindings, type WebGpuKernel } from "./index.js";

describe("webgpu executor", () => {
  const webgpu = createWebGpuExecutor();
  afterAll(() => webgpu.dispose());

  it("construction and supports() need no device and never throw", () => {
    const noGpu = createWebGpuExecutor({
      nodeBindings: {
        create: () => {
          throw new Error("must not be called");
        },
      },
    });
    expect(noGpu.supports("softmax", {})).toEqual({ ok: true });
    expect(noGpu.supports("attention", {})).toEqual({ ok: true });
    expect(noGpu.supports("no-such-op", {})).toMatchObject({ ok: false });
    expect(noGpu.name).toBe("webgpu");
  });

  it('init() without an adapter is a clear "webgpu: no adapter" saying what to install', async () => {
    const none = createWebGpuExecutor({
      nodeBindings: { create: () => ({ requestAdapter: async () => null }) as unknown as GPU },
    });
    const e = await none.init().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(AttnGraphError.isInstance(e), String(e)).toBe(true);
    expect((e as AttnGraphError).code).toBe("no-adapter");
    expect((e as Error).message).toMatch(/^webgpu: no adapter/);
    expect((e as Error).message).toContain("VK_ICD_FILENAMES");
    expect((e as Error).message).toContain("chromium");
  });

  it("a WebGPU validation error is reported naming the node", async () => {
    const ex = new WebGpuExecutor();
    // A kernel whose program binds its input where the shader wants a uniform: Dawn rejects the bind group.
    const broken: WebGpuKernel = async (call, gpu) => {
      const x = call.inputs[0]!;
      const out = gpu.alloc(x.shape);
      gpu.device.createBuffer({ size: 4, usage: 0x1 | 0x80 }); // MAP_READ | STORAGE: invalid usage
      return out;
    };
    ex.registerKernel("broken", broken);
    await ex.init();
    const x = await ex.upload(Tensor.from([1, 2], [2]));
    const e = await Promise.resolve(
      ex.dispatch({ kind: "broken", node: "blocks.3.broken", attrs: {}, inputs: [x], outShape: [2] }),
    ).catch((err: unknown) => err);
    expect(e).toMatchObject({ code: "webgpu-validation", subject: "blocks.3.broken" });
    expect((e as Error).message).toContain("blocks.3.broken");
    // The executor stays usable.
    ex.registerKernel("double", doubleKernel);
    const y = await ex.download(
      await ex.dispatch({ kind: "double", node: "d", attrs: {}, inputs: [x], outShape: [2] }),
    );
    expect(Array.from(y.toFloat32Array())).toEqual([2, 4]);
    await ex.dispose();
  });

  it("a WGSL compile error is reported naming the node and the program", async () => {
    const ex = new WebGpuExecutor();
    ex.registerKernel("bad-wgsl", async (_call, gpu) => {
      const out = gpu.alloc([1]);
      await gpu.run({
        name: "bad",
        cacheKey: "bad-wgsl",
        code: () => "fn main( {",
        params: new Params(),
        inputs: [],
        output: out,
        workgroups: [1, 1, 1],
      });
      return out;
    });
    const e = await Promise.resolve(
      ex.dispatch({ kind: "bad-wgsl", node: "my.node", attrs: {}, inputs: [], outShape: [1] }),
    ).catch((err: unknown) => err);
    expect(e).toMatchObject({ code: "webgpu-validation", subject: "my.node" });
    await ex.dispose();
  });

  it("release returns memory to the pool: views keep their buffer alive until the last one goes", async () => {
    const x = await webgpu.upload(Tensor.from([1, 2, 3, 4, 5, 6], [2, 3]));
    const t = await webgpu.dispatch({
      kind: "transpose",
      node: "t",
      attrs: { perm: [1, 0] },
      inputs: [x],
      outShape: [3, 2],
    });
    expect(t.storage).toBe(x.storage);
    webgpu.release(x);
    expect(Array.from((await webgpu.download(t)).toFloat32Array())).toEqual([1, 4, 2, 5, 3, 6]);
    webgpu.release(t);
    webgpu.release(t); // idempotent
    expect(x.storage.refs).toBe(0);
    const before = webgpu.bufferCount;
    const y = await webgpu.upload(Tensor.from([7, 8, 9, 10, 11, 12], [6]));
    expect(webgpu.bufferCount, "the released buffer is reused").toBe(before);
    expect(y.storage.buffer).toBe(x.storage.buffer);
  });
});

// dispose() wins over a pending init(): the device that arrives after it is not kept and init() rejects. The device is
// requested through a binding of our own (the webgpu package behind a gate), so that it arrives only once dispose()
// has finished.
describe("dispose() while init() waits for its device", () => {
  it("init() rejects with the disposed error, the late device is not kept, and later uses fail the same way", async () => {
    const { create } = (await import("webgpu")) as { create(flags: string[]): GPU };
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let late: GPUDevice | undefined;
    const bindings = {
      create: (flags: string[]) => {
        const gpu = create(flags);
        return {
          requestAdapter: async (o?: GPURequestAdapterOptions) => {
            await gate;
            const a = await gpu.requestAdapter(o);
            // Only what device.ts reads of an adapter; the device it makes is kept here to be destroyed at the end.
            return (
              a && {
                limits: a.limits,
                info: a.info,
                requestDevice: async (d?: GPUDeviceDescriptor) => (late = await a.requestDevice(d)),
              }
            );
          },
        } as unknown as GPU;
      },
    };
    const ex = createWebGpuExecutor({ nodeBindings: bindings });
    const init = ex.init().then(
      () => "resolved",
      (e: unknown) => e,
    );
    await ex.dispose();
    open();
    const expectDisposed = (e: unknown) =>
      expect(e).toMatchObject({
        code: "disposed",
        message: "executor webgpu: the executor is disposed, expected a live executor, got disposed",
      });
    expectDisposed(await init);
    expect(late, "the device did arrive after dispose()").toBeDefined();
    expect(ex.device).toBeUndefined();
    expectDisposed(await ex.upload(Tensor.from([1, 2], [2])).catch((e: unknown) => e));
    expectDisposed(await ex.init().catch((e: unknown) => e));
    late!.destroy();
  });
});

/** A user kernel written against the exported template: y = 2x. */
const doubleKernel: WebGpuKernel = async (call, gpu) => {
  const x = call.inputs[0]!;
  const out = gpu.alloc(x.shape);
  const p = new Params();
  const xv = p.view(x);
  const n = p.u32(x.size);
  await gpu.run({
    name: "double",
    cacheKey: "double",
    code: () => `${PRELUDE}
${storageBindings(["X"])}
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3u, @builtin(num_workgroups) nw: vec3u) {
  let i = flat_id(g, nw);
  if (i < pu(${n}u)) { Y[i] = 2.0 * X[view_at(${xv}u, i)]; }
}`,
    params: p,
    inputs: [x],
    output: out,
    workgroups: [Math.ceil(x.size / 64), 1, 1],
  });
  return out;
};
