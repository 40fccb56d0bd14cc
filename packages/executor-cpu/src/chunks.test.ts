// Long kernels in chunks (issue 11 item 9): a call with a signal and more work than one chunk answers with a Promise,
// pauses between chunks, and stops soon after its signal fires; its numbers are bit for bit those of one uninterrupted
// call; a call without a signal stays synchronous. The run-level check (runtime → AbortError) is in executor-wasm's
// cancel.test.ts, for both executors: this package cannot depend on the runtime, whose tests depend on it.
import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { abortLater, chunkedForwardCalls, randomTensor } from "@attngraph/testkit";
import { pointwiseGrad, reluOp, siluOp } from "@attngraph/graph";
import { KernelAbortedError } from "./index.js"; // re-exported from @attngraph/graph, where it lives
import { CpuExecutor, type UnsignalledCall } from "./executor.js";
import { createCpuExecutor } from "./register-kernels.js";
import { heads } from "./test-heads.js";

/** silu's derived gradient as the pointwise kernel runs it (the output's gradient in x0, x in x1). */
const SILU_GRAD = (pointwiseGrad(siluOp.pointwise!({}), 0) as { expr: unknown }).expr;
const RELU_GRAD = (pointwiseGrad(reluOp.pointwise!({}), 0) as { expr: unknown }).expr;

/** The exact bits of a tensor's elements, row-major (NaN payloads and −0 included). */
const bits = (t: Tensor): Uint32Array => new Uint32Array(Float32Array.from(t.toFloat32Array()).buffer);

const never = () => new AbortController().signal;

/** A call as the tests write it: without a signal (one is added where a test wants one). */
type Call = UnsignalledCall;

/** One call of each chunked kernel, shaped to span many chunks of a tiny chunkWork, with the awkward cases in. */
function cases(): Record<string, Call> {
  // The forward calls every chunking executor checks (testkit), then the cpu's backward kernels on the same inputs.
  const { calls, inputs } = chunkedForwardCalls(randomTensor, 8);
  const { q, k, vBad, pad, scores, x, mask } = inputs;
  return {
    ...calls,
    ...backwardCases(scores, x),
    ...attentionGradCases(q, k, vBad, pad, mask),
  };
}

/** The fused attention backward: lse, then each input's gradient (a NaN value row, padding, window, dropout in). */
function attentionGradCases(
  q: Tensor,
  k: Tensor,
  v: Tensor,
  pad: Tensor,
  mask: Record<string, unknown>,
): Record<string, Call> {
  const [B, H, L, D] = q.shape as [number, number, number, number];
  const [, Hkv, S] = k.shape as [number, number, number];
  const lseCall: Call = {
    kind: "attention-lse",
    node: "attn.lse",
    attrs: { ...mask, scale: 0.35 },
    inputs: [q, k, pad],
    outShape: [B, H, L],
  };
  const lse = createCpuExecutor().dispatch(lseCall);
  const out = heads(B, H, L, D, 23);
  const grad = heads(B, H, L, D, 24);
  const attrs = { ...mask, scale: 0.35, dropoutRate: 0.2, dropoutSeed: 11, training: true };
  const gradCall = (wrt: "q" | "k" | "v"): Call => ({
    kind: "attention-grad",
    node: `attn.d${wrt}`,
    attrs: { ...attrs, wrt },
    inputs: [q, k, v, out, grad, lse, pad],
    outShape: wrt === "q" ? [B, H, L, D] : [B, Hkv, S, D],
  });
  return {
    "attention-lse": lseCall,
    "attention-grad wrt q": gradCall("q"),
    "attention-grad wrt k": gradCall("k"),
    "attention-grad wrt v": gradCall("v"),
  };
}

/** The backward kernels that work in chunks; the ones that accumulate across rows (sum-to, weight grads) included. */
function backwardCases(scores: Tensor, x: Tensor): Record<string, Call> {
  const [B, H, L, S] = scores.shape as [number, number, number, number];
  const masked = new Tensor(
    scores.toFloat32Array().map((v, i) => (i % 5 === 2 ? -Infinity : v)),
    scores.shape,
  );
  const weights = randomTensor([B, H, S, L], 12).permute([0, 1, 3, 2]);
  const grad = randomTensor([B, H, L, S], 13);
  const ids = Tensor.int32(
    Array.from({ length: 2 * 70 }, (_, i) => (i * 7) % 30),
    [2, 70],
  ) as unknown as Tensor;
  const targets = Tensor.int32(
    Array.from({ length: 2 * 70 }, (_, i) => (i % 9 === 4 ? -1 : (i * 5) % 48)),
    [2, 70],
  ) as unknown as Tensor;
  /** A gradient of the scores ([B, H, L, S], scale 0.5) from two inputs of their shape. */
  const scoresGrad = (kind: string, node: string, inputs: Tensor[]): Call => ({
    kind,
    node,
    attrs: { scale: 0.5 },
    inputs,
    outShape: [B, H, L, S],
  });
  /** A norm's gradient and its weight's (the output's gradient and x, the weight for the first only). */
  const normGradCases = (norm: "layer-norm" | "rms-norm", node: string, eps: number): Record<string, Call> => ({
    [`${norm}-grad`]: {
      kind: `${norm}-grad`,
      node: `${node}.grad`,
      attrs: { eps },
      inputs: [randomTensor([5, 3, 48], 15), x, randomTensor([48], 16)],
      outShape: [5, 3, 48],
    },
    [`${norm}-weight-grad`]: {
      kind: `${norm}-weight-grad`,
      node: `${node}.weight.grad`,
      attrs: { eps },
      inputs: [randomTensor([5, 3, 48], 15), x],
      outShape: [48],
    },
  });
  /** An activation's gradient: the output's gradient and x in. */
  const activationGrad = (kind: string, attrs: Record<string, unknown>): Call => ({
    kind,
    node: "act.grad",
    attrs,
    inputs: [randomTensor([5, 3, 48], 17), x],
    outShape: [5, 3, 48],
  });
  return {
    "sum-to": {
      kind: "sum-to",
      node: "bias.grad",
      attrs: { shape: [48, 1] },
      inputs: [x.permute([0, 2, 1])],
      outShape: [48, 1],
    },
    "linear-weight-grad": {
      kind: "linear-weight-grad",
      node: "W.grad",
      attrs: {},
      inputs: [randomTensor([5, 3, 40], 14).permute([1, 0, 2]), x.permute([1, 0, 2])],
      outShape: [40, 48],
    },
    "softmax-grad": scoresGrad("softmax-grad", "scores.grad", [weights, grad]),
    "mask-grad": scoresGrad("mask-grad", "masked.grad", [grad, masked]),
    ...normGradCases("layer-norm", "ln", 1e-5),
    ...normGradCases("rms-norm", "norm", 1e-6),
    "gelu-grad": activationGrad("gelu-grad", { approximate: "none" }),
    "pointwise (relu's gradient)": activationGrad("pointwise", { expr: RELU_GRAD }),
    "pointwise (silu's gradient)": activationGrad("pointwise", { expr: SILU_GRAD }),
    "embedding-grad": {
      kind: "embedding-grad",
      node: "emb.grad",
      attrs: { rows: 30 },
      inputs: [ids, randomTensor([2, 70, 48], 18)],
      outShape: [30, 48],
    },
    "cross-entropy-grad": {
      kind: "cross-entropy-grad",
      node: "loss.grad",
      attrs: { ignoreIndex: -1, reduction: "mean" },
      inputs: [randomTensor([2, 70, 48], 19), targets, undefined],
      outShape: [2, 70, 48],
    },
  };
}

describe("chunked kernels on the cpu executor", () => {
  const plain = createCpuExecutor();
  // One multiply-add per chunk: every row, every 4 keys packed and every key block is a chunk of its own.
  const tiny = createCpuExecutor({ chunkWork: 1 });

  for (const [kind, call] of Object.entries(cases())) {
    it(`${kind}: in chunks, bit for bit the numbers of one uninterrupted call`, async () => {
      const want = plain.dispatch(call);
      expect(want).toBeInstanceOf(Tensor); // no signal: synchronous
      const pending = tiny.dispatch({ ...call, signal: never() });
      expect(pending).toBeInstanceOf(Promise);
      const got = await pending;
      expect(got.shape).toEqual(want.shape);
      expect(bits(got)).toEqual(bits(want));
    });
  }

  it("writes a chunked result into call.out, as an uninterrupted call does", async () => {
    const call = cases().attention!;
    const want = plain.dispatch(call);
    const out = Tensor.zeros(call.outShape);
    const got = await tiny.dispatch({ ...call, out, signal: never() });
    expect(got).toBe(out);
    expect(bits(got)).toEqual(bits(want));
  });

  it("a call with a signal that fits one chunk stays synchronous", () => {
    const call = cases().score!;
    expect(plain.dispatch({ ...call, signal: never() })).toBeInstanceOf(Tensor);
  });

  it("two chunked calls interleaving on one executor do not share scratch", async () => {
    const a = cases().attention!;
    const b = { ...a, inputs: [heads(2, 4, 150, 8, 20), heads(2, 2, 200, 8, 21), heads(2, 2, 200, 8, 22), undefined] };
    const [gotA, gotB] = await Promise.all([
      tiny.dispatch({ ...a, signal: never() }),
      tiny.dispatch({ ...b, signal: never() }),
    ]);
    expect(bits(gotA)).toEqual(bits(plain.dispatch(a)));
    expect(bits(gotB)).toEqual(bits(plain.dispatch(b)));
  });

  it("rejects a chunk size that is not a whole number >= 1", () => {
    for (const bad of [0, -1, 1.5, NaN, Infinity]) {
      const e = (() => {
        try {
          new CpuExecutor({ chunkWork: bad });
        } catch (err) {
          return err;
        }
        return undefined;
      })();
      expect(AttnGraphError.isInstance(e), String(bad)).toBe(true);
      expect((e as AttnGraphError).message).toMatch(/^executor cpu\.chunkWork: invalid chunk size/);
    }
  });
});

describe("aborting a long kernel on the cpu executor", () => {
  /**
   * Dispatches `call` with a signal, aborts 50 ms later, and returns the error and how long after abort() it came.
   * `out` starts as NaN, so that the rows the kernel wrote can be counted afterwards.
   */
  async function abortAfter50ms(
    ex: CpuExecutor,
    call: Call,
  ): Promise<{ error: unknown; latency: number; out: Tensor }> {
    const out = new Tensor(new Float32Array(call.outShape.reduce((a, b) => a * b, 1)).fill(NaN), call.outShape);
    const { signal, abortedAt } = abortLater(50);
    const error = await Promise.resolve(ex.dispatch({ ...call, out, signal })).then(
      () => undefined,
      (e: unknown) => e,
    );
    return { error, latency: performance.now() - abortedAt(), out };
  }

  const rowsWritten = (out: Tensor, rowLength: number): number => {
    const d = out.toFloat32Array();
    let rows = 0;
    for (let r = 0; r < d.length / rowLength; r++) if (!Number.isNaN(d[r * rowLength]!)) rows++;
    return rows;
  };

  it("a fused attention of several seconds stops within well under a second of abort(), with part of its rows done", async () => {
    const ex = createCpuExecutor();
    const T = 16384; // non-causal, D = 8: T² · (2 · 8 + exp) ≈ 10¹⁰ multiply-add equivalents, seconds on one core
    const q = randomTensor([1, 1, T, 8], 30);
    const attrs = { causal: false, window: null, alignment: "top-left", scale: 0.35 };
    const call: Call = { kind: "attention", node: "context.heads", attrs, inputs: [q, q, q], outShape: [1, 1, T, 8] };
    const { error, latency, out } = await abortAfter50ms(ex, call);
    expect(error).toBeInstanceOf(KernelAbortedError);
    expect((error as KernelAbortedError).name).toBe("AbortError");
    expect((error as KernelAbortedError).code).toBe("aborted");
    expect(((error as KernelAbortedError).cause as Error).message).toBe("user cancelled");
    expect((error as Error).message).toBe("context.heads: aborted between two chunks of the kernel");
    expect(latency).toBeLessThan(1000);
    expect(rowsWritten(out, 8), "query rows finished before the abort").toBeLessThan(T / 2);
    // The executor is still usable, and right.
    const q1 = randomTensor([1, 1, 300, 8], 33);
    const small = { kind: "attention", node: "context.heads", attrs, inputs: [q1, q1, q1], outShape: [1, 1, 300, 8] };
    expect(bits(ex.dispatch(small))).toEqual(bits(createCpuExecutor().dispatch(small)));
  });

  it("a projection over a huge batch stops within well under a second of abort(), with part of its rows done", async () => {
    const ex = createCpuExecutor();
    const rows = 32768; // 32768 · 512 · 512 ≈ 9·10⁹ multiply-adds: seconds on one core
    const call: Call = {
      kind: "projection",
      node: "queries",
      attrs: {},
      inputs: [randomTensor([rows, 512], 31), randomTensor([512, 512], 32)],
      outShape: [rows, 512],
    };
    const { error, latency, out } = await abortAfter50ms(ex, call);
    expect(error).toBeInstanceOf(KernelAbortedError);
    expect(latency).toBeLessThan(1000);
    expect(rowsWritten(out, 512)).toBeLessThan(rows / 2);
  });
});
