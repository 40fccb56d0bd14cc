// compile's checkNumerics: the first node that produces NaN or ±∞ is named (−∞ only where mask and ALiBi hide
// scores); off, nothing is read back and the NaN flows to the output as it would.
import { attentionWeights, buildAttention } from "@attngraph/attention";
import { createCpuExecutor, type CpuKernel } from "@attngraph/executor-cpu";
import { GraphBuilder, createOpRegistry, defineOp } from "@attngraph/graph";
import { Tensor } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { compile } from "./compile.js";
import { NumericsError } from "./errors.js";

/** log(x) elementwise: NaN below 0, −∞ at 0. */
const logOp = defineOp<{ base: number }>({
  kind: "log",
  doc: "log(x)",
  inputs: [{ name: "x" }],
  attrs: { base: { type: "number", default: Math.E } },
  inferShape: ([x]) => x!,
});
const logKernel: CpuKernel = ({ inputs }) => {
  const x = inputs[0]!.contiguous();
  return new Tensor(
    x.data.map((v) => Math.log(v)),
    x.shape,
  );
};

function graph() {
  const b = new GraphBuilder({ registry: createOpRegistry([logOp]) });
  const x = b.input("x", [4]);
  const l = b.add("log", "logged", { x });
  return b.output(b.add("gelu", "out", { x: l })).build();
}

async function session(checkNumerics: boolean) {
  const cpu = createCpuExecutor();
  cpu.registerKernel("log", logKernel);
  return compile(graph(), { executors: [cpu], checkNumerics });
}

describe("checkNumerics", () => {
  it("names the first node that produced NaN, with the element and value; the session stays usable", async () => {
    const s = await session(true);
    const e = await s.run({ x: Tensor.from([1, 2, -1, 3], [4]) }).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(NumericsError);
    expect((e as NumericsError).message).toBe("run 1: node logged (op log) produced NaN at element 2 (checkNumerics)");
    expect([(e as NumericsError).subject, (e as NumericsError).index]).toEqual(["logged", 2]);
    await expect(s.run({ x: Tensor.from([0, 2, 1, 3], [4]) })).rejects.toThrow(
      /node logged \(op log\) produced -Infinity at element 0/,
    );
    const { out } = await s.run({ x: Tensor.from([1, 2, 1, 3], [4]) });
    expect(out!.shape).toEqual([4]);
    await s.dispose();
  });

  it("off by default: the NaN reaches the output", async () => {
    const s = await session(false);
    const { out } = await s.run({ x: Tensor.from([1, 2, -1, 3], [4]) });
    expect(Number.isNaN(out!.toArray()[2])).toBe(true);
    await s.dispose();
  });

  it("the −∞ of masked scores is no error: causal attention with padding runs clean", async () => {
    const config = { dIn: 4, dOut: 4, numHeads: 2, causal: true, outProj: false };
    const g = buildAttention(config, { keyPaddingMask: true });
    const w = (n: number) => ({ shape: [4, 4], data: Array.from({ length: 16 }, (_, i) => Math.sin(i + n)) });
    const s = await compile(g, {
      executors: [createCpuExecutor()],
      weights: attentionWeights(config, { W_query: w(1), W_key: w(2), W_value: w(3) }),
      checkNumerics: true,
    });
    const x = Tensor.from(
      Array.from({ length: 12 }, (_, i) => Math.cos(i)),
      [1, 3, 4],
    );
    const { context } = await s.run({ x, keyPaddingMask: Tensor.from([0, 0, 1], [1, 3]) });
    expect(context!.toFloat32Array().every(Number.isFinite)).toBe(true);
    await s.dispose();
  });

  it("−∞ carried by a copy of masked scores (a reshape of a transposed view) is no error either", async () => {
    const b = new GraphBuilder();
    const scores = b.input("scores", [1, 1, 2, 2]);
    const masked = b.add("mask", "masked", { scores }, { causal: true });
    const t = b.add("transpose", "t", { x: masked }, { perm: [0, 1, 3, 2] });
    const flat = b.add("reshape", "flat", { x: t }, { shape: [1, 4] });
    const s = await compile(b.output(flat).build(), { executors: [createCpuExecutor()], checkNumerics: true });
    expect(s.plan.steps.find((x) => x.node === "flat")!.layout).toBe("copy");
    const { flat: out } = await s.run({ scores: Tensor.from([1, 2, 3, 4], [1, 1, 2, 2]) });
    expect(out!.toArray()).toEqual([1, 3, -Infinity, 4]);
    await s.dispose();
  });
});
