// Faults: the memory limit refuses an allocation before growing, naming what was allocated; a trap inside a kernel
// fails the dispatch naming the node, and the executor re-instantiates its module and memory: uploads (a session's
// weights) are restored into the new memory on next use, so the next run works; a decode session's caches (written in
// place) are not, and its reset() makes new ones.
import { describe, expect, it } from "vitest";
import { attentionWeights, multiHeadAttention } from "@attngraph/attention";
import { createOpRegistry, defineOp, insertAfter } from "@attngraph/graph";
import { compile, compileDecoder } from "@attngraph/runtime";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import type { WasmKernel } from "./executor.js";
import { onWasm, projectionCall, random, thrown as caught, wasmExecutor, worst } from "./test-util.js";

describe("memory limit", () => {
  it("an upload past maxMemoryBytes is refused before the memory grows, naming the tensor and the size", async () => {
    const ex = await wasmExecutor({ maxMemoryBytes: 4 * 2 ** 20 });
    const small = ex.upload(random([1000], 1));
    const before = ex.memory.buffer.byteLength;
    const e = caught(() => ex.upload(new Tensor(new Float32Array(2 ** 20 + 5), [2 ** 20 + 5])));
    expect(AttnGraphError.isInstance(e), String(e)).toBe(true);
    expect((e as AttnGraphError).code).toBe("memory-limit");
    expect((e as AttnGraphError).subject).toContain("upload of a tensor [1048581]");
    expect((e as Error).message).toMatch(
      /allocating 4\.0 MiB would grow the wasm memory past its limit, expected at most 4\.0 MiB/,
    );
    expect(ex.memory.buffer.byteLength).toBe(before);
    expect(ex.download(small).size).toBe(1000); // still usable
  });

  it("a kernel output past the limit names the node", async () => {
    const ex = await wasmExecutor({ maxMemoryBytes: 2 ** 20 });
    const x = ex.upload(random([64, 8], 2));
    const w = ex.upload(random([4096, 8], 3));
    const e = caught(() => ex.dispatch(projectionCall("blocks.0.attn.queries", x, w))); // → [64, 4096]
    expect((e as AttnGraphError).code).toBe("memory-limit");
    expect((e as AttnGraphError).subject).toBe("blocks.0.attn.queries (output of op projection) [64, 4096] float32");
    expect((e as Error).message).toContain("1.0 MiB");
  });
});

describe("a trap inside a kernel", () => {
  // A user kernel that traps on demand (an out-of-bounds read in the module), else the identity.
  let armed = false;
  const probe: WasmKernel = (call, ctx) => {
    const x = call.inputs[0]!;
    if (armed) {
      const out = ctx.alloc(x.shape, call.node);
      ctx.exports.copy(0xfffff000, ctx.desc(x), out.address);
    }
    return ctx.view(x, x.shape, x.strides);
  };

  /** What `run` rejects with while the probe traps (undefined if it resolves). */
  const trapping = async (run: () => Promise<unknown>): Promise<unknown> => {
    armed = true;
    try {
      return await run().then(
        () => undefined,
        (e: unknown) => e,
      );
    } finally {
      armed = false;
    }
  };

  /** Multi-head attention (its decode form with `decode`) with the probe after its scores, and its weights. */
  const probedAttention = (decode: boolean) => {
    const probeOp = defineOp<Record<string, never>>({
      kind: "probe",
      doc: "identity that can trap",
      inputs: [{ name: "x", doc: "any" }],
      attrs: {},
      inferShape: ([x]) => x!,
    });
    const config = { dIn: 16, dOut: 16, numHeads: 2, causal: true };
    const base = multiHeadAttention(config, { registry: createOpRegistry([probeOp]), decode });
    const graph = insertAfter(base, "scores", (b, scores) => b.add("probe", "scores.probe", { x: scores }, {}));
    const m = (seed: number) => ({ shape: [16, 16], data: random([16, 16], seed).toFloat32Array() });
    const weights = attentionWeights(config, {
      W_query: m(1),
      W_key: m(2),
      W_value: m(3),
      out_proj: m(4),
      out_bias: { shape: [16], data: random([16], 5).toFloat32Array() },
    });
    return { graph, weights };
  };

  it("fails the dispatch with the node named, then works on a fresh instance; uploads are restored", async () => {
    const ex = await wasmExecutor();
    ex.registerKernel("probe", probe);
    const t = random([3, 5], 4);
    const kept = ex.upload(t);
    const memory = ex.memory;
    armed = true;
    const e = caught(() =>
      ex.dispatch({ kind: "probe", node: "scores.probe", attrs: {}, inputs: [kept], outShape: [3, 5] }),
    );
    armed = false;
    expect(AttnGraphError.isInstance(e), String(e)).toBe(true);
    expect((e as AttnGraphError).code).toBe("wasm-trap");
    expect((e as Error).message).toMatch(
      /^scores\.probe: WebAssembly trap in the kernel for op probe on executor wasm/,
    );
    expect(ex.stats.traps).toBe(1);
    expect(ex.memory).not.toBe(memory);
    // The upload made before the trap is restored into the new memory on first use.
    const y = ex.dispatch({ kind: "softmax", node: "after", attrs: { scale: 1 }, inputs: [kept], outShape: [3, 5] });
    expect(worst(ex.download(y), onWasm(ex, "softmax", { scale: 1 }, [t], [3, 5]), 0, 0)).toBe(0);
  });

  it("in a session: the run rejects naming the node, and the next run gives the same output as before", async () => {
    const { graph, weights } = probedAttention(false);
    const wasm = await wasmExecutor();
    wasm.registerKernel("probe", probe);
    const session = await compile(graph, { executors: [wasm], weights });
    const x = random([2, 9, 16], 6);
    const before = (await session.run({ x })).output!;
    const err = await trapping(() => session.run({ x }));
    expect(String(err)).toContain("scores.probe");
    expect(((err as { cause?: unknown }).cause as AttnGraphError | undefined)?.code).toBe("wasm-trap");
    const after = (await session.run({ x })).output!;
    expect(worst(after, before, 0, 0)).toBe(0);
    expect(wasm.stats.instances).toBe(2);
    await session.dispose();
  });

  it("in a decode session: the cache died with the memory; the next step fails, reset() makes new caches and decoding works", async () => {
    const { graph, weights } = probedAttention(true);
    const wasm = await wasmExecutor();
    wasm.registerKernel("probe", probe);
    const decoder = await compileDecoder(graph, { executors: [wasm], weights, maxLength: 8, batch: 1 });
    const prompt = random([1, 3, 16], 6);
    const token = random([1, 1, 16], 7);
    const first = (await decoder.step({ x: prompt })).output!;
    const second = (await decoder.step({ x: token })).output!;
    const err = await trapping(() => decoder.step({ x: token }));
    expect(((err as { cause?: unknown }).cause as AttnGraphError | undefined)?.code).toBe("wasm-trap");
    // The keys and values of the 4 positions before were in the old memory: the next step cannot read them.
    await expect(decoder.step({ x: token })).rejects.toThrow(
      /node k\.cache .*written in place \(a decode session's cache\) before the wasm module was re-instantiated .*reset\(\) makes new caches/,
    );
    decoder.reset();
    expect(worst((await decoder.step({ x: prompt })).output!, first, 0, 0)).toBe(0);
    expect(worst((await decoder.step({ x: token })).output!, second, 0, 0)).toBe(0);
    expect(wasm.stats.instances).toBe(2);
    await decoder.dispose();
  });
});
