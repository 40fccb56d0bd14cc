// relu on wasm: max(x, 0) bit for bit against the float64 definition written here, with the IEEE extremes (NaN kept as
// torch.relu keeps it, ±∞, ±0, subnormals), every length mod 4 (the vector tail), views (gathered lanes give the
// dense path's bits), in place, and the call's errors.
import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { f64, onWasm, onWasmViews, random, thrown, wasmExecutor } from "../test-util.js";

const ex = await wasmExecutor();

/** torch.relu in float64: NaN stays NaN (Math.max propagates it); −0 gives +0. */
const relu64 = (x: Tensor) => f64(x).map((v) => Math.max(v, 0));

/** The float32 bits, every NaN as one (a NaN's sign and payload mean nothing, and V8's own NaN is negative). */
const bitsOf = (a: Float32Array) => Array.from(new Uint32Array(a.buffer), (b, i) => (Number.isNaN(a[i]) ? 0x7fc00000 : b));
const bits = (t: Tensor) => bitsOf(t.toFloat32Array());
const expectBits = (got: Tensor, want: Float64Array) => expect(bits(got)).toEqual(bitsOf(Float32Array.from(want)));

describe("relu on wasm", () => {
  it("extremes, exactly: NaN kept, +∞ kept, −∞, −0 and negative subnormals give +0", () => {
    const x = Tensor.from([-2, -0, 0, 1e-30, 3.5, NaN, Infinity, -Infinity, -1e-45, 1e-45, 3e38, -3e38], [12]);
    expectBits(onWasm(ex, "relu", {}, [x], x.shape), relu64(x));
  });

  it("every length mod 4 and rank 0", () => {
    for (const n of [1, 2, 3, 4, 5, 7, 64, 301]) {
      const x = random([n], n, 3);
      expectBits(onWasm(ex, "relu", {}, [x], x.shape), relu64(x));
    }
    expect(onWasm(ex, "relu", {}, [Tensor.from([-1.5], [])], []).toArray()).toEqual([0]);
  });

  it("a strided view gives the bits of its dense copy", () => {
    for (const [rows, n] of [[7, 5], [3, 1], [2, 13], [4, 8]] as const) {
      const x = random([n, rows], rows * 31 + n, 6).transpose(0, 1); // [rows, n], last axis strided
      const strided = onWasmViews(ex, "relu", {}, [x], [rows, n]);
      expectBits(strided, relu64(x));
      expect(bits(strided)).toEqual(bits(onWasm(ex, "relu", {}, [x.contiguous()], [rows, n])));
    }
  });

  it("runs in place (out = x's own memory)", () => {
    const x = random([3, 11], 3, 4);
    const xv = ex.upload(x);
    const out = ex.dispatch({ kind: "relu", node: "mlp.act", attrs: {}, inputs: [xv], outShape: x.shape, out: xv });
    expect(out).toBe(xv);
    expectBits(ex.download(out), relu64(x));
    ex.release(xv);
  });

  it("an int32 x is an error naming the node and field", () => {
    const ints = ex.upload(Tensor.int32([1, 2, 3], [3]));
    const e = thrown(() => ex.dispatch({ kind: "relu", node: "mlp.act", attrs: {}, inputs: [ints], outShape: [3] }));
    expect(AttnGraphError.isInstance(e)).toBe(true);
    expect((e as Error).message).toMatch(/^mlp\.act\.x: .*wrong dtype, expected float32, got int32/);
  });
});
