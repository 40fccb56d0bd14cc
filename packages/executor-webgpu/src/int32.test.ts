// int32 values on the GPU: uploaded as i32 and downloaded as Tensor<"int32"> with the same bits (including integers
// whose bits are a NaN, an infinity or a denormal as float32, which a trip through f32 could change); views and the
// copy a reshape may need keep the dtype and the bits; a value of one dtype in a slot of the other is an "input" error
// naming <node>.<slot>; and int32 ids and targets go through compile(). (That an int32 upload survives a device loss
// is in device-loss.test.ts.)
import { afterAll, describe, expect, it } from "vitest";
import { GraphBuilder } from "@attngraph/graph";
import { compile } from "@attngraph/runtime";
import { Tensor, compare, type AnyTensor } from "@attngraph/tensor";
import { createWebGpuExecutor } from "./index.js";
import { randomTensor } from "./test-helpers.js";
import { GpuOps } from "./test-gpu.js";
import { crossEntropy64, gelu64, layerNorm64 } from "./test-reference64.js";

const webgpu = createWebGpuExecutor();
const ops = new GpuOps(webgpu);
afterAll(() => webgpu.dispose());

// 0x7fc00001 and 0xff800000 are a NaN and −∞ as float32 bits, 1 and 0x007fffff denormals.
const SPECIAL = [
  0,
  1,
  -1,
  0x7fffffff,
  -0x80000000,
  0x7fc00001,
  0xff800000 | 0,
  0x007fffff,
  16777217,
  -16777217,
  0x7f800000,
  12345,
];

async function download(v: Parameters<typeof webgpu.download>[0]): Promise<AnyTensor> {
  return webgpu.download(v) as Promise<AnyTensor>;
}

describe("int32 values", () => {
  it("upload → download keeps dtype and every bit", async () => {
    const t = Tensor.int32(SPECIAL, [3, 4]);
    const v = await webgpu.upload(t);
    expect(v.dtype).toBe("int32");
    const back = await download(v);
    expect(back.dtype).toBe("int32");
    expect(back.shape).toEqual([3, 4]);
    expect(Array.from(back.toInt32Array())).toEqual(SPECIAL);
  });

  it("views (transpose, slice) and a reshape that must copy keep dtype and bits", async () => {
    const t = Tensor.int32(SPECIAL, [3, 4]);
    const transposed = await ops.dispatch("transpose", { perm: [1, 0] }, [t], [4, 3]);
    expect(transposed.dtype).toBe("int32");
    // Merging the axes of a transposed view cannot be a view: the kernel copies, bit for bit (copy.wgsl.ts uses u32).
    const merged = await ops.dispatch("reshape", { shape: [12] }, [transposed], [12]);
    expect(merged.storage).not.toBe(transposed.storage);
    const back = await download(merged);
    expect(back.dtype).toBe("int32");
    expect(Array.from(back.toInt32Array())).toEqual(Array.from(t.transpose(0, 1).toInt32Array()));
    const sliced = await download(await ops.dispatch("slice", { axis: 1, start: 1, size: 2 }, [t], [3, 2]));
    expect(Array.from(sliced.toInt32Array())).toEqual([1, -1, 0x7fc00001, 0xff800000 | 0, -16777217, 0x7f800000]);
  });

  it("a float32 copy is bit-exact too (the copy moves words): NaN payloads and denormals survive", async () => {
    const bits = new Uint32Array([0x7fc00001, 0x00000001, 0x80000000, 0x7f800000, 0x3f800000, 0xffc12345]);
    const t = new Tensor(new Float32Array(bits.buffer), [2, 3]);
    const transposed = await ops.dispatch("transpose", { perm: [1, 0] }, [t], [3, 2]);
    const merged = await download(await ops.dispatch("reshape", { shape: [6] }, [transposed], [6]));
    const want = new Uint32Array(t.transpose(0, 1).toFloat32Array().buffer);
    expect(Array.from(new Uint32Array(merged.toFloat32Array().buffer))).toEqual(Array.from(want));
  });

  it("int32 into a float slot, in every kind of kernel, is an input error naming <node>.<slot>", async () => {
    const i4 = Tensor.int32([1, 2, 3, 4], [1, 1, 2, 2]);
    const f4 = randomTensor([1, 1, 2, 2], 1);
    const cases: [string, Record<string, unknown>, (AnyTensor | undefined)[], number[], string][] = [
      ["softmax", { scale: 1 }, [i4], [1, 1, 2, 2], "x"],
      ["dropout", { rate: 0.5, seed: 1, training: true }, [i4], [1, 1, 2, 2], "x"],
      ["projection", {}, [f4, Tensor.int32([1, 2], [1, 2])], [1, 1, 2, 1], "weight"],
      ["score", {}, [f4, i4], [1, 1, 2, 2], "k"],
      ["weighted-sum", {}, [i4, f4], [1, 1, 2, 2], "weights"],
      [
        "mask",
        { causal: false, window: null, alignment: "top-left", scale: 1 },
        [f4, Tensor.int32([0, 0], [1, 2])],
        [1, 1, 2, 2],
        "keyPaddingMask",
      ],
      ["alibi", { slopes: null, scale: 1, alignment: "top-left" }, [i4], [1, 1, 2, 2], "scores"],
      ["rope", { base: 10000, rotaryDim: null, positionOffset: 0 }, [i4], [1, 1, 2, 2], "x"],
      ["attention", { causal: false, window: null, alignment: "top-left", scale: 1 }, [f4, f4, i4], [1, 1, 2, 2], "v"],
    ];
    for (const [kind, attrs, inputs, out, slot] of cases) {
      const e = await ops.error(kind, attrs, inputs, out, `n.${kind}`);
      expect(e, kind).toMatchObject({ code: "input", subject: `n.${kind}.${slot}`, expected: "float32", got: "int32" });
      expect((e as Error).message, kind).toContain("expected float32, got int32");
    }
  });
});

describe("int32 ids and targets through compile()", () => {
  it("embedding + pos_embed → layer-norm → gelu → lm head → cross-entropy matches float64", async () => {
    const [Bn, T, V, E] = [2, 3, 11, 8];
    const b = new GraphBuilder();
    const ids = b.input("ids", ["B", "T"], "int32");
    const targets = b.input("targets", ["B", "T"], "int32");
    const wte = b.weight("wte", [V, E]);
    const wpe = b.weight("wpe", [1, T, E]);
    const lnW = b.weight("ln.weight", [E]);
    const lnB = b.weight("ln.bias", [E]);
    const head = b.weight("head", [V, E]);
    const tok = b.add("embedding", "tok", { ids, weight: wte });
    const x = b.add("add", "x", { a: tok, b: wpe });
    const ln = b.add("layer-norm", "ln", { x, weight: lnW, bias: lnB });
    const act = b.add("gelu", "act", { x: ln }, { approximate: "tanh" });
    const logits = b.add("projection", "logits", { x: act, weight: head });
    const loss = b.add("cross-entropy", "loss", { logits, targets }, { ignoreIndex: -100 });
    b.output(loss, logits);
    const w = {
      wte: randomTensor([V, E], 1),
      wpe: randomTensor([1, T, E], 2),
      "ln.weight": randomTensor([E], 3),
      "ln.bias": randomTensor([E], 4),
      head: randomTensor([V, E], 5),
    };
    const session = await compile(b.build(), { executors: [webgpu], weights: w });
    const idv = [3, 0, 10, 7, 7, 1];
    const tv = [0, -100, 5, 10, 2, 2];
    const out = await session.run({ ids: Tensor.int32(idv, [Bn, T]), targets: Tensor.int32(tv, [Bn, T]) });

    // float64: the same chain on the float32 weights.
    const f = (t: Tensor): number[] => Array.from(t.toFloat32Array());
    const [te, pe, hw] = [f(w.wte), f(w.wpe), f(w.head)];
    const xs = idv.flatMap((id, k) => Array.from({ length: E }, (_, j) => te[id * E + j]! + pe[(k % T) * E + j]!));
    const h = layerNorm64(xs, E, 1e-5, f(w["ln.weight"]), f(w["ln.bias"])).map((v) => gelu64(v, "tanh"));
    const lg = Array.from({ length: Bn * T * V }, (_, k) => {
      const [r, o] = [Math.floor(k / V), k % V];
      return h.slice(r * E, r * E + E).reduce((s, v, j) => s + v * hw[o * E + j]!, 0);
    });
    expect(compare(out["logits"]!, lg, { abs: 1e-5, rel: 1e-4 }).ok).toBe(true);
    expect(out["loss"]!.shape).toEqual([]);
    expect(compare(out["loss"]!, crossEntropy64(lg, V, tv, "mean", -100), { abs: 1e-5, rel: 1e-4 }).ok).toBe(true);
    await session.dispose();
  });
});
