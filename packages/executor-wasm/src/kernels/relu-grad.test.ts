// relu-grad on wasm: grad where y > 0 (or y is NaN), exactly 0 where y <= 0 even for a NaN or infinite grad (PyTorch's
// threshold_backward), bit for bit against the definition written here; every length mod 4 (the vector tail), strided
// views (the gathered lanes give the dense path's bits), and the call's errors.
import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { f64, onWasm, onWasmViews, random, thrown, wasmExecutor } from "../test-util.js";

const ex = await wasmExecutor();

const grad64 = (g: Tensor, y: Tensor) => {
  const gv = f64(g);
  return f64(y).map((v, i) => (v <= 0 ? 0 : gv[i]!));
};

/** The float32 bits, every NaN as one (a NaN's sign and payload mean nothing, and V8's own NaN is negative). */
const bitsOf = (a: Float32Array) => Array.from(new Uint32Array(a.buffer), (b, i) => (Number.isNaN(a[i]) ? 0x7fc00000 : b));
const bits = (t: Tensor) => bitsOf(t.toFloat32Array());
const expectBits = (got: Tensor, want: Float64Array) => expect(bits(got)).toEqual(bitsOf(Float32Array.from(want)));

describe("relu-grad on wasm", () => {
  it("y <= 0 gives exactly +0 whatever grad is; y > 0 or NaN passes grad", () => {
    const y = Tensor.from([0, -0, NaN, Infinity, 1e-30, 2.5, 0, 3, 0, -1e-45, 1e-45], [11]);
    const g = Tensor.from([1.5, -2, 3, -4, 5, -6, NaN, NaN, Infinity, 7, -8], [11]);
    expectBits(onWasm(ex, "relu-grad", {}, [g, y], y.shape), grad64(g, y));
  });

  it("random grads over relu outputs, every length mod 4", () => {
    for (const n of [1, 2, 3, 4, 5, 7, 64, 301]) {
      const g = random([n], n, 3);
      const y = Tensor.from(f64(random([n], n + 7, 6)).map((v) => Math.max(v, 0)), [n]);
      expectBits(onWasm(ex, "relu-grad", {}, [g, y], y.shape), grad64(g, y));
    }
  });

  it("strided views give the bits of their dense copies", () => {
    for (const [rows, n] of [[7, 5], [3, 1], [2, 13], [4, 8]] as const) {
      const g = random([n, rows], rows * 31 + n, 3).transpose(0, 1); // [rows, n], last axis strided
      const y = random([n, rows], rows * 17 + n, 3).transpose(0, 1);
      const strided = onWasmViews(ex, "relu-grad", {}, [g, y], [rows, n]);
      expectBits(strided, grad64(g, y));
      expect(bits(strided)).toEqual(bits(onWasm(ex, "relu-grad", {}, [g.contiguous(), y.contiguous()], [rows, n])));
    }
  });

  it("errors name the node and field: mismatched shapes", () => {
    const e = thrown(() => onWasm(ex, "relu-grad", {}, [random([2, 3], 1), random([3, 2], 2)], [2, 3], "mlp.act.grad"));
    expect(AttnGraphError.isInstance(e)).toBe(true);
    expect((e as AttnGraphError).subject).toBe("mlp.act.grad.y");
  });
});
