// Long kernels in chunks (issue 11 item 9), on the wasm executor: a call with a signal and more work than one chunk
// answers with a Promise, pauses between chunks (other kernels may run meanwhile), and stops soon after its signal
// fires, releasing what it allocated; its numbers are bit for bit those of one uninterrupted call; a call without a
// signal stays synchronous. The run-level check (runtime → AbortError) is cancel.test.ts.
import { describe, expect, it } from "vitest";
import { pointwiseGrad, reluOp, siluOp } from "@attngraph/graph";
import { AttnGraphError, Tensor, type Shape } from "@attngraph/tensor";
import { abortLater, chunkedForwardCalls, seededHeads } from "@attngraph/testkit";
import { KernelAbortedError } from "./index.js"; // re-exported from @attngraph/graph, where it lives
import { random, wasmExecutor, trapKernel } from "./test-util.js";
import { runHostCall, type HostCall } from "./test-host-call.js";

const heads = (B: number, n: number, T: number, D: number, seed: number) => seededHeads(random, B, n, T, D, seed);

/** The exact bits of a tensor's elements, row-major (NaN payloads and −0 included). */
const bits = (t: Tensor): Uint32Array => new Uint32Array(Float32Array.from(t.toFloat32Array()).buffer);

const never = () => new AbortController().signal;

/** silu as the scheduler lowers it, and its derived gradient (the output's gradient in x0, x in x1). */
const SILU = siluOp.pointwise!({});
const SILU_GRAD = (pointwiseGrad(SILU, 0) as { expr: unknown }).expr;
const RELU = reluOp.pointwise!({});
const RELU_GRAD = (pointwiseGrad(RELU, 0) as { expr: unknown }).expr;

/** One call of each chunked kernel, shaped to span many chunks of a tiny chunkWork, with the awkward cases in. */
function cases(): Record<string, HostCall> {
  // The forward calls every chunking executor checks (testkit), then the wasm's own kernels on the same inputs.
  const { calls, inputs } = chunkedForwardCalls(random, 12);
  const { q, k, vBad, pad, scores, x, mask } = inputs;
  const [B, H, L, S] = scores.shape as [number, number, number, number];
  const [, Hkv, , D] = k.shape as [number, number, number, number];
  /** A call on [7, 301] rows (an activation, or its gradient with the output's gradient first). */
  const rowsCall = (kind: string, node: string, attrs: Record<string, unknown>, inputs: Tensor[]): HostCall => ({
    kind,
    node,
    attrs,
    inputs,
    outShape: [7, 301],
  });
  /** The activations' x (values in [−4, 4)), and a strided output gradient for theirs. */
  const x7 = () => random([7, 301], 18, 4);
  const dyT = () => random([301, 7], 40).transpose(0, 1);
  /** A norm's call (or its gradient's) on [3, 40, 37]; the weight gradients' output is [37]. */
  const normCall = (kind: string, node: string, eps: number, inputs: Tensor[], outShape: Shape = [3, 40, 37]) => ({
    kind,
    node,
    attrs: { eps },
    inputs,
    outShape,
  });
  /** A norm gradient's output gradient, and its x strided. */
  const dy = () => random([3, 40, 37], 37);
  const xT = () => random([3, 37, 40], 38).permute([0, 2, 1]);
  /** A binary op broadcasting [5, 1, 6] against a [3, 5, 4, 6] whose leading axes do not collapse. */
  const broadcastCall = (kind: string, node: string): HostCall => ({
    kind,
    node,
    attrs: {},
    inputs: [random([3, 1, 5, 4, 6], 19).permute([0, 2, 1, 3, 4]).reshape([3, 5, 4, 6]), random([5, 1, 6], 20)],
    outShape: [3, 5, 4, 6],
  });
  /** Token ids for the embedding and its gradient; logits and targets (every 9th ignored) for cross-entropy's. */
  const ids = () =>
    Tensor.int32(
      Array.from({ length: 120 }, (_, i) => (i * 37) % 50),
      [4, 30],
    );
  const logits = () => random([4, 30, 17], 22, 5);
  const targets = () =>
    Tensor.int32(
      Array.from({ length: 120 }, (_, i) => (i % 9 === 4 ? -100 : (i * 7) % 17)),
      [4, 30],
    );
  return {
    ...calls,
    attention: {
      kind: "attention",
      node: "context.heads",
      attrs: { ...mask, scale: 0.35, dropoutRate: 0.2, dropoutSeed: 11, training: true },
      inputs: [random([B, H, D, L], 12).permute([0, 1, 3, 2]), k, vBad, pad], // q strided along D: copied first
      outShape: [B, H, L, D],
    },
    "mask with a user mask and a bias": {
      kind: "mask",
      node: "masked",
      attrs: { ...mask, scale: 0.25 },
      inputs: [
        random([B, 2, 40, S], 23),
        pad,
        new Tensor(
          random([B, 40, S], 13).data.map((v) => (v > -0.5 ? 1 : 0)),
          [B, 40, S],
        ),
        random([1, 2, 40, S], 14),
      ],
      outShape: [B, 2, 40, S],
    },
    "layer-norm": normCall("layer-norm", "ln", 1e-5, [random([3, 40, 37], 15), random([37], 16), random([37], 17)]),
    gelu: rowsCall("gelu", "act", { approximate: "none" }, [x7()]),
    "pointwise (relu)": rowsCall("pointwise", "act", { expr: RELU }, [x7()]),
    "rms-norm": normCall("rms-norm", "norm", 1e-6, [random([3, 40, 37], 15), random([37], 16)]),
    "pointwise (silu, strided)": rowsCall("pointwise", "act", { expr: SILU }, [random([301, 7], 41).transpose(0, 1)]),
    mul: broadcastCall("mul", "gated"),
    add: broadcastCall("add", "residual"),
    embedding: {
      kind: "embedding",
      node: "tok_embed",
      attrs: {},
      inputs: [ids(), random([50, 24], 21)],
      outShape: [4, 30, 24],
    },
    "linear-gelu": {
      kind: "linear-gelu",
      node: "mlp.act",
      attrs: { approximate: "tanh" },
      inputs: [x, random([40, 48], 24), random([40], 25)],
      outShape: [5, 3, 40],
    },
    "add-layer-norm": {
      kind: "add-layer-norm",
      node: "ln2",
      attrs: { eps: 1e-5 },
      inputs: [
        random([3, 1, 5, 4, 6], 26).permute([0, 2, 1, 3, 4]).reshape([3, 5, 4, 6]),
        random([5, 1, 6], 27),
        random([6], 28),
        undefined,
      ],
      outShape: [3, 5, 4, 12],
    },
    "cross-entropy": {
      kind: "cross-entropy",
      node: "loss",
      attrs: { ignoreIndex: -100, reduction: "mean" },
      inputs: [logits(), targets()],
      outShape: [],
    },
    // Backward ops.
    "sum-to (reduced axes outer)": {
      kind: "sum-to",
      node: "bias.grad",
      attrs: { shape: [3, 1, 24] },
      inputs: [random([4, 3, 30, 24], 31)],
      outShape: [3, 1, 24],
    },
    "sum-to (reduced axes inner)": {
      kind: "sum-to",
      node: "rows.grad",
      attrs: { shape: [40, 1] },
      inputs: [random([40, 300], 32)],
      outShape: [40, 1],
    },
    "linear-weight-grad": {
      kind: "linear-weight-grad",
      node: "q_proj.dW",
      attrs: {},
      inputs: [random([3, 5, 40], 33).permute([1, 0, 2]), x],
      outShape: [40, 48],
    },
    "softmax-grad": {
      kind: "softmax-grad",
      node: "weights.grad",
      attrs: { scale: 0.5 },
      inputs: [random([B, H, S, L], 34).permute([0, 1, 3, 2]), scores],
      outShape: [B, H, L, S],
    },
    "mask-grad": {
      kind: "mask-grad",
      node: "masked.grad",
      attrs: { scale: 0.25 },
      inputs: [
        scores,
        new Tensor(
          random([B, H, L, S], 35).data.map((v) => (v > 0.3 ? -Infinity : v)),
          [B, H, L, S],
        ),
      ],
      outShape: [B, H, L, S],
    },
    "layer-norm-grad": normCall("layer-norm-grad", "ln.grad", 1e-5, [
      random([3, 40, 37], 36),
      random([3, 40, 37], 15),
      random([37], 16),
    ]),
    "layer-norm-weight-grad": normCall("layer-norm-weight-grad", "ln.dgamma", 1e-5, [dy(), xT()], [37]),
    "gelu-grad": rowsCall("gelu-grad", "act.grad", { approximate: "none" }, [random([7, 301], 39), x7()]),
    "gelu-grad (strided)": rowsCall("gelu-grad", "act.grad", { approximate: "tanh" }, [dyT(), x7()]),
    "pointwise (relu's gradient, strided)": rowsCall("pointwise", "act.grad", { expr: RELU_GRAD }, [dyT(), x7()]),
    "rms-norm-grad": normCall("rms-norm-grad", "norm.grad", 1e-6, [dy(), xT(), random([37], 16)]),
    "rms-norm-weight-grad": normCall("rms-norm-weight-grad", "norm.dw", 1e-6, [dy(), xT()], [37]),
    "pointwise (silu's gradient)": rowsCall("pointwise", "act.grad", { expr: SILU_GRAD }, [dyT(), x7()]),
    "embedding-grad": {
      kind: "embedding-grad",
      node: "tok_embed.grad",
      attrs: { rows: 50 },
      inputs: [ids(), random([4, 30, 24], 41)],
      outShape: [50, 24],
    },
    "attention-lse": {
      kind: "attention-lse",
      node: "context.lse",
      attrs: { ...mask, scale: 0.35 },
      inputs: [q, k, pad],
      outShape: [B, H, L],
    },
    "attention-grad (wrt k: a kv head's accumulator kept across chunks)": {
      kind: "attention-grad",
      node: "context.dk",
      attrs: { ...mask, scale: 0.35, dropoutRate: 0.2, dropoutSeed: 11, training: true, wrt: "k" },
      inputs: [
        q,
        k,
        heads(B, Hkv, S, D, 43),
        random([B, H, L, D], 44),
        random([B, H, L, D], 45),
        random([B, H, L], 46),
        pad,
      ],
      outShape: [B, Hkv, S, D],
    },
    "cross-entropy-grad": {
      kind: "cross-entropy-grad",
      node: "loss.grad",
      attrs: { ignoreIndex: -100, reduction: "none" },
      inputs: [logits(), targets(), random([30, 4], 42).transpose(0, 1)],
      outShape: [4, 30, 17],
    },
  };
}

describe("chunked kernels on the wasm executor", () => {
  for (const [kind, call] of Object.entries(cases())) {
    it(`${kind}: in chunks, bit for bit the numbers of one uninterrupted call, nothing left allocated`, async () => {
      const plain = await wasmExecutor();
      // One multiply-add per chunk: every row, every 8 keys packed and every key block is a chunk of its own.
      const tiny = await wasmExecutor({ chunkWork: 1 });
      const want = await runHostCall(plain, call);
      const got = await runHostCall(tiny, call, never());
      expect(got.shape).toEqual(want.shape);
      expect(bits(got)).toEqual(bits(want));
      expect(tiny.inUseBytes).toBe(0);
    });
  }

  it("answers a call without a signal synchronously, and a signalled one in chunks with a Promise", async () => {
    const tiny = await wasmExecutor({ chunkWork: 1 });
    const x = tiny.upload(random([64, 32], 1));
    const w = tiny.upload(random([32, 32], 2));
    const call = { kind: "projection", node: "p", attrs: {}, inputs: [x, w, undefined], outShape: [64, 32] };
    const sync = tiny.dispatch(call);
    expect(sync).not.toBeInstanceOf(Promise);
    const later = tiny.dispatch({ ...call, signal: never() });
    expect(later).toBeInstanceOf(Promise);
    const got = await later;
    expect(bits(tiny.download(got))).toEqual(bits(tiny.download(sync)));
  });

  it("two chunked attentions interleaving on one module do not share scratch", async () => {
    const plain = await wasmExecutor();
    const tiny = await wasmExecutor({ chunkWork: 1 });
    const a = cases().attention!;
    const b = {
      ...a,
      inputs: [heads(2, 4, 150, 12, 20), heads(2, 2, 200, 12, 21), heads(2, 2, 200, 12, 22), undefined],
    };
    const [gotA, gotB] = await Promise.all([runHostCall(tiny, a, never()), runHostCall(tiny, b, never())]);
    expect(bits(gotA)).toEqual(bits(await runHostCall(plain, a)));
    expect(bits(gotB)).toEqual(bits(await runHostCall(plain, b)));
  });

  it("gives up when a trap elsewhere replaced the module while it waited, naming the node", async () => {
    const tiny = await wasmExecutor({ chunkWork: 1 });
    tiny.registerKernel("trap", trapKernel);
    const s = tiny.upload(random([8, 300], 3));
    const pending = Promise.resolve(
      tiny.dispatch({
        kind: "softmax",
        node: "weights",
        attrs: { scale: 1 },
        inputs: [s],
        outShape: [8, 300],
        signal: never(),
      }),
    );
    expect(() => tiny.dispatch({ kind: "trap", node: "t", attrs: {}, inputs: [s], outShape: [8, 300] })).toThrow(
      /WebAssembly trap/,
    );
    const e = await pending.then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(AttnGraphError.isInstance(e), String(e)).toBe(true);
    expect((e as Error).message).toMatch(/^weights: the wasm module was replaced/);
  });

  it("rejects a chunk size that is not a whole number >= 1", async () => {
    for (const bad of [0, -1, 1.5, NaN]) {
      const e = await wasmExecutor({ chunkWork: bad }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect((e as Error).message, String(bad)).toMatch(/^executor wasm\.chunkWork: invalid chunk size/);
    }
  });
});

describe("aborting a long kernel on the wasm executor", () => {
  it("a fused attention of several seconds stops within well under a second of abort(), freeing what it allocated", async () => {
    const ex = await wasmExecutor();
    const T = 32768; // non-causal, D = 8: T² · (2 · 8 + exp) ≈ 8·10¹⁰ multiply-add equivalents, seconds on one core
    const q = ex.upload(random([1, 1, T, 8], 30));
    const attrs = { causal: false, window: null, alignment: "top-left", scale: 0.35 };
    const before = ex.inUseBytes;
    const { signal, abortedAt } = abortLater(50);
    const call = {
      kind: "attention",
      node: "context.heads",
      attrs,
      inputs: [q, q, q],
      outShape: [1, 1, T, 8],
      signal,
    };
    const error = await Promise.resolve(ex.dispatch(call)).then(
      () => undefined,
      (e: unknown) => e,
    );
    const latency = performance.now() - abortedAt();
    expect(error).toBeInstanceOf(KernelAbortedError);
    expect((error as KernelAbortedError).name).toBe("AbortError");
    expect(((error as KernelAbortedError).cause as Error).message).toBe("user cancelled");
    expect(latency).toBeLessThan(1000);
    expect(ex.inUseBytes, "the output and the call's own scratch are released").toBe(before);
    // The module is still usable, and right.
    const small = {
      kind: "attention",
      node: "context.heads",
      attrs,
      inputs: [random([1, 1, 300, 8], 31), random([1, 1, 300, 8], 32), random([1, 1, 300, 8], 33)],
      outShape: [1, 1, 300, 8],
    };
    expect(bits(await runHostCall(ex, small))).toEqual(bits(await runHostCall(await wasmExecutor(), small)));
  });
});
