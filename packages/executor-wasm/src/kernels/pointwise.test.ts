// The pointwise kernel on wasm (the expression interpreter a tile of 4096 elements at a time), through relu's expression:
// max(x, 0) bit for bit against the float64 definition written here, with the IEEE extremes (NaN kept as torch.relu
// keeps it, ±∞, ±0, subnormals), every length mod 4 and around the tile's size, views (copied dense first), in place,
// several inputs, and the call's errors.
import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { reluOp } from "@attngraph/graph";
import { WHERE3_EXPR, where3 } from "@attngraph/testkit";
import { builtinPointwise } from "../pointwise-as.js";
import { f64, onWasm, onWasmViews, random, thrown, wasmExecutor, stridedRows } from "../test-util.js";

const ex = await wasmExecutor();
/** relu as the scheduler lowers it: the pointwise kernel with relu's expression over x0. */
const RELU = { expr: reluOp.pointwise!({}) };

/** torch.relu in float64: NaN stays NaN (Math.max propagates it); −0 gives +0. */
const relu64 = (x: Tensor) => f64(x).map((v) => Math.max(v, 0));

/** The float32 bits, every NaN as one (a NaN's sign and payload mean nothing, and V8's own NaN is negative). */
const bitsOf = (a: Float32Array) =>
  Array.from(new Uint32Array(a.buffer), (b, i) => (Number.isNaN(a[i]) ? 0x7fc00000 : b));
const bits = (t: Tensor) => bitsOf(t.toFloat32Array());
const expectBits = (got: Tensor, want: Float64Array) => expect(bits(got)).toEqual(bitsOf(Float32Array.from(want)));

describe("pointwise on wasm (relu's expression)", () => {
  it("extremes, exactly: NaN kept, +∞ kept, −∞, −0 and negative subnormals give +0", () => {
    const x = Tensor.from([-2, -0, 0, 1e-30, 3.5, NaN, Infinity, -Infinity, -1e-45, 1e-45, 3e38, -3e38], [12]);
    expectBits(onWasm(ex, "pointwise", RELU, [x], x.shape), relu64(x));
  });

  it("every length mod 4 and rank 0", () => {
    for (const n of [1, 2, 3, 4, 5, 7, 64, 301, 4095, 4096, 4097, 8195]) {
      const x = random([n], n, 3);
      expectBits(onWasm(ex, "pointwise", RELU, [x], x.shape), relu64(x));
    }
    expect(onWasm(ex, "pointwise", RELU, [Tensor.from([-1.5], [])], []).toArray()).toEqual([0]);
  });

  it("a strided view gives the bits of its dense copy", () => {
    for (const x of stridedRows()) {
      const strided = onWasmViews(ex, "pointwise", RELU, [x], x.shape);
      expectBits(strided, relu64(x));
      expect(bits(strided)).toEqual(bits(onWasm(ex, "pointwise", RELU, [x.contiguous()], x.shape)));
    }
  });

  it("runs in place (out = x's own memory)", () => {
    const x = random([3, 11], 3, 4);
    const xv = ex.upload(x);
    const out = ex.dispatch({
      kind: "pointwise",
      node: "mlp.act",
      attrs: RELU,
      inputs: [xv],
      outShape: x.shape,
      out: xv,
    });
    expect(out).toBe(xv);
    expectBits(ex.download(out), relu64(x));
    ex.release(xv);
  });

  it("an int32 x is an error naming the node and field", () => {
    const ints = ex.upload(Tensor.int32([1, 2, 3], [3]));
    const e = thrown(() =>
      ex.dispatch({ kind: "pointwise", node: "mlp.act", attrs: RELU, inputs: [ints], outShape: [3] }),
    );
    expect(AttnGraphError.isInstance(e)).toBe(true);
    expect((e as Error).message).toMatch(/^mlp\.act\.x0: .*wrong dtype, expected float32, got int32/);
  });

  it("three inputs and a where, across tiles: each input's element in its own register", () => {
    const [a, b, c] = [random([5000], 1, 2), random([5000], 2, 2), random([5000], 3, 2)];
    const got = onWasm(ex, "pointwise", { expr: WHERE3_EXPR }, [a, b, c], [5000]).toFloat32Array();
    expect(bitsOf(got)).toEqual(bitsOf(where3(a.toFloat32Array(), b.toFloat32Array(), c.toFloat32Array())));
  });

  it("each built-in expression's loop rendered at build time gives the interpreter's bits (tails of n mod 4 included)", () => {
    const special = [0, -0, 1e-30, -1e-30, 3e38, -3e38, Infinity, -Infinity, NaN, 1e-45, -1e-45, 88.7, -88.7, 20, -20];
    for (const { name, expr } of builtinPointwise()) {
      const slots = new Set(JSON.stringify(expr).match(/x[0-3]/g));
      for (const n of [1, 7, 301, 4099]) {
        const inputs = [0, 1, 2, 3]
          .filter((k) => slots.has(`x${k}`) || k === 0)
          .map((k) => {
            const t = random([n], n * 7 + k, 6).toFloat32Array();
            special.forEach((v, j) => j < n && (t[(j * (k + 3)) % n] = v));
            return Tensor.from(Array.from(t), [n]);
          });
        const fast = onWasm(ex, "pointwise", { expr }, inputs, [n]);
        // × 1 keeps every value (NaN, −0, ±∞) and is no built-in's expression: the interpreter runs it.
        const slow = onWasm(ex, "pointwise", { expr: { op: "mul", args: [expr, 1] } }, inputs, [n]);
        expect(bits(fast), `${name}, n = ${n}`).toEqual(bits(slow));
      }
    }
  });
});
