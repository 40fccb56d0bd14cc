// int32 values on the wasm executor: uploads keep their dtype (4 bytes an element, the integers' own bits, never
// converted to float), views keep it, `download` refuses one with a clear error (the contract's download gives float32
// tensors) while `downloadAny` gives a Tensor<"int32"> back, and an int32 upload is restored into a fresh memory after
// a trap like any other.
import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { random, thrown, wasmExecutor, trapKernel } from "./test-util.js";

describe("int32 values", () => {
  it("upload keeps the dtype and the integers' bits; downloadAny gives them back as int32", async () => {
    const ex = await wasmExecutor();
    const big = [0, 1, -1, 2 ** 31 - 1, -(2 ** 31), 16777217]; // 16777217 has no float32
    const v = ex.upload(Tensor.int32(big, [2, 3]));
    expect(v.dtype).toBe("int32");
    expect(Array.from(new Int32Array(ex.memory.buffer, v.address, 6))).toEqual(big);
    const back = ex.downloadAny(v);
    expect(back.dtype).toBe("int32");
    expect(back.shape).toEqual([2, 3]);
    expect(Array.from(back.toInt32Array())).toEqual(big);
    expect(ex.downloadAny(ex.upload(random([3], 1))).dtype).toBe("float32");
    expect(ex.upload(random([3], 1)).dtype).toBe("float32");
  });

  it("download of an int32 value is an error pointing to downloadAny", async () => {
    const ex = await wasmExecutor();
    const e = thrown(() => ex.download(ex.upload(Tensor.int32([1, 2], [2]))));
    expect(AttnGraphError.isInstance(e)).toBe(true);
    expect((e as Error).message).toMatch(
      /^download: download\(\) gives float32 tensors .*use downloadAny\(\) for an int32 value, expected a float32 value, got an int32 value \[2\]/,
    );
  });

  it("an int32 upload made before a trap is restored as int32 in the new memory", async () => {
    const ex = await wasmExecutor();
    ex.registerKernel("trap", trapKernel);
    const table = ex.upload(random([4, 3], 2));
    const ids = ex.upload(Tensor.int32([3, 1, 2], [3]));
    const before = ex
      .download(ex.dispatch({ kind: "embedding", node: "emb", attrs: {}, inputs: [ids, table], outShape: [3, 3] }))
      .toFloat32Array();
    expect(() => ex.dispatch({ kind: "trap", node: "t", attrs: {}, inputs: [table], outShape: [4, 3] })).toThrow(
      /WebAssembly trap/,
    );
    const after = ex
      .download(ex.dispatch({ kind: "embedding", node: "emb", attrs: {}, inputs: [ids, table], outShape: [3, 3] }))
      .toFloat32Array();
    expect(after).toEqual(before);
    expect(Array.from(ex.downloadAny(ids).toInt32Array())).toEqual([3, 1, 2]);
  });

  it("view kernels and float kernels refuse int32 values (their slots are float32, as the graph declares)", async () => {
    const ex = await wasmExecutor();
    const ids = ex.upload(Tensor.int32([1, 2, 3, 4], [2, 2]));
    for (const [kind, attrs] of [
      ["reshape", { shape: [4] }],
      ["transpose", { perm: [1, 0] }],
      ["softmax", { scale: 1 }],
    ] as const) {
      const e = thrown(() =>
        ex.dispatch({ kind, node: "n", attrs, inputs: [ids], outShape: kind === "reshape" ? [4] : [2, 2] }),
      ) as Error;
      expect(e.message, kind).toMatch(/^n\.x: input 0 \(x\) of op .* has the wrong dtype, expected float32, got int32/);
    }
  });
});
