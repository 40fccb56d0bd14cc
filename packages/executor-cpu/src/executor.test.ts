import { describe, expect, it } from "vitest";
import { Tensor, UnsupportedError } from "@attngraph/tensor";
import { thrownError } from "@attngraph/testkit/test-helpers";
import { CpuExecutor, type CpuKernel } from "./executor.js";

const identity: CpuKernel = (call) => call.inputs[0]!;

describe("CpuExecutor", () => {
  it("has contract version 1 and the name cpu", () => {
    const ex = new CpuExecutor();
    expect(ex.specVersion).toBe(1);
    expect(ex.name).toBe("cpu");
  });

  it("rejects a second kernel for the same op, naming op and executor", () => {
    const ex = new CpuExecutor();
    ex.registerKernel("softmax", identity);
    const err = thrownError(() => ex.registerKernel("softmax", identity));
    expect(err.code).toBe("duplicate-kernel");
    expect(err.message).toMatch(/op softmax/);
    expect(err.message).toMatch(/executor cpu/);
  });

  it("rejects a kernel that is not a function", () => {
    const ex = new CpuExecutor();
    expect(thrownError(() => ex.registerKernel("softmax", 42 as unknown as CpuKernel)).code).toBe("invalid-kernel");
    expect(ex.supports("softmax", {}).ok).toBe(false);
  });

  it("supports() answers from the registry and never throws", () => {
    const ex = new CpuExecutor();
    ex.registerKernel("softmax", identity);
    expect(ex.supports("softmax", {})).toEqual({ ok: true });
    expect(ex.supports("mask", { causal: true })).toEqual({ ok: false, reason: "no kernel for op mask" });
    expect(() => ex.supports(Symbol("odd") as unknown as string, {})).not.toThrow();
  });

  it("dispatching an op without a kernel is an UnsupportedError", () => {
    const ex = new CpuExecutor();
    const err = thrownError(() => ex.dispatch({ kind: "mask", node: "masked", attrs: {}, inputs: [], outShape: [] }));
    expect(err).toBeInstanceOf(UnsupportedError);
    expect(err.code).toBe("unsupported");
    expect(err.message).toBe("unsupported: op mask on executor cpu");
  });

  it("dispatch calls the kernel and returns its tensor", () => {
    const ex = new CpuExecutor();
    ex.registerKernel("double", (call) =>
      Tensor.from(
        call.inputs[0]!.toArray().map((v) => 2 * v),
        call.inputs[0]!.shape,
      ),
    );
    const y = ex.dispatch({ kind: "double", node: "d", attrs: {}, inputs: [Tensor.from([1, 2], [2])], outShape: [2] });
    expect(y.toArray()).toEqual([2, 4]);
  });

  it("a kernel returning the wrong shape is a kernel-output error naming node, expected and got", () => {
    const ex = new CpuExecutor();
    ex.registerKernel("bad", () => Tensor.zeros([2, 3]));
    const err = thrownError(() =>
      ex.dispatch({ kind: "bad", node: "blocks.0.attn.weights", attrs: {}, inputs: [], outShape: [3, 2] }),
    );
    expect(err.code).toBe("kernel-output");
    expect(err.subject).toBe("blocks.0.attn.weights");
    expect(err.expected).toBe("[3, 2]");
    expect(err.got).toBe("[2, 3]");
    expect(err.message).toMatch(/^blocks\.0\.attn\.weights: /);
  });

  it("a kernel returning something that is not a tensor is a kernel-output error too", () => {
    const ex = new CpuExecutor();
    ex.registerKernel("bad", (() => undefined) as unknown as CpuKernel);
    expect(thrownError(() => ex.dispatch({ kind: "bad", node: "n", attrs: {}, inputs: [], outShape: [1] })).code).toBe(
      "kernel-output",
    );
  });

  it("upload and download hand the host tensor through", async () => {
    const ex = new CpuExecutor();
    const t = Tensor.from([1], [1]);
    expect(ex.upload(t)).toBe(t);
    expect(ex.download(t)).toBe(t);
  });
});
