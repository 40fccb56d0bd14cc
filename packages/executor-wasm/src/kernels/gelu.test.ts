// gelu on wasm against float64 GELU (test-gelu64.ts): erfc by Simpson's rule on e^(−t²) (independent of the kernel's
// Chebyshev fit), the tanh form as x · sigmoid(2u) in float64. Both forms within 1e-6 absolute over |x| < 10; relative
// error below 1e-6 for the exact form everywhere (no cancellation for negative x), and for the tanh form below 1e-5
// (it grows with |2u| rounded to float32, up to 9e-6 where the value is below 1e-20, as in any float32 tanh GELU).
// Also the IEEE extremes, views (gathered lanes give the bits of the dense path), odd lengths (the vector tail), in
// place, and the call's errors.
import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { f64, onWasm, onWasmViews, random, thrown, wasmExecutor, stridedRows } from "../test-util.js";
import { erfc64, gelu64 } from "./test-gelu64.js";

const ex = await wasmExecutor();

/** The largest absolute error, and the largest relative one over values above `floor` in magnitude. */
function errors(
  got: Float32Array,
  x: Float64Array,
  approximate: "none" | "tanh",
  floor = 1e-30,
): { abs: number; rel: number } {
  let abs = 0;
  let rel = 0;
  x.forEach((v, i) => {
    const w = gelu64(v, approximate);
    const d = Math.abs(got[i]! - w);
    abs = Math.max(abs, d);
    if (Math.abs(w) > floor) rel = Math.max(rel, d / Math.abs(w));
  });
  return { abs, rel };
}

describe("gelu on wasm", () => {
  it("the test's erfc is right where it matters (against known values)", () => {
    expect(erfc64(0)).toBeCloseTo(1, 12);
    expect(Math.abs(erfc64(1) - 0.157299207050285) / 0.157299207050285).toBeLessThan(1e-10);
    expect(Math.abs(erfc64(5) - 1.5374597944280349e-12) / 1.5374597944280349e-12).toBeLessThan(1e-8);
  });

  for (const approximate of ["none", "tanh"] as const) {
    it(`${approximate}: within 1e-6 absolute over −10..10 (step 1/128), and within 1e-6 (none) or 1e-5 (tanh) relative`, () => {
      const values = Array.from({ length: 20 * 128 + 1 }, (_, i) => -10 + i / 128);
      const x = Tensor.from(values, [values.length]);
      const got = onWasm(ex, "gelu", { approximate }, [x], x.shape).toFloat32Array();
      const { abs, rel } = errors(got, f64(x), approximate);
      expect(abs).toBeLessThan(1e-6);
      expect(rel).toBeLessThan(approximate === "none" ? 1e-6 : 1e-5);
    });

    it(`${approximate}: extremes: ±0, ±1e-3, ±30, ±1e30, ±∞, NaN`, () => {
      const values = [0, -0, 1e-3, -1e-3, 30, -30, 1e30, -1e30, Infinity, -Infinity, NaN];
      const got = onWasm(
        ex,
        "gelu",
        { approximate },
        [Tensor.from(values, [values.length])],
        [values.length],
      ).toFloat32Array();
      values.forEach((v, i) => {
        const w = gelu64(v, approximate);
        if (Number.isNaN(w)) expect(got[i], `gelu(${v})`).toBeNaN();
        else if (!Number.isFinite(w)) expect(got[i], `gelu(${v})`).toBe(w);
        else
          expect(Math.abs(got[i]! - w), `gelu(${v}) = ${got[i]}, expected ${w}`).toBeLessThanOrEqual(
            Math.abs(w) * 1e-6 + 1e-30,
          );
      });
    });

    it(`${approximate}: a strided view gives the bits of its dense copy; odd lengths and rank 0`, () => {
      for (const x of stridedRows()) {
        const strided = onWasmViews(ex, "gelu", { approximate }, [x], x.shape).toFloat32Array();
        const dense = onWasm(ex, "gelu", { approximate }, [x.contiguous()], x.shape).toFloat32Array();
        expect(new Uint32Array(strided.buffer)).toEqual(new Uint32Array(dense.buffer));
        const { abs } = errors(dense, f64(x), approximate);
        expect(abs).toBeLessThan(2e-6);
      }
      const scalar = onWasm(ex, "gelu", { approximate }, [Tensor.from([1.5], [])], []);
      expect(Math.abs(scalar.toFloat32Array()[0]! - gelu64(1.5, approximate))).toBeLessThan(1e-6);
    });
  }

  it("runs in place (out = x's own memory)", () => {
    const x = random([3, 11], 3, 4);
    const xv = ex.upload(x);
    const want = onWasm(ex, "gelu", { approximate: "none" }, [x], x.shape).toFloat32Array();
    const out = ex.dispatch({
      kind: "gelu",
      node: "mlp.act",
      attrs: { approximate: "none" },
      inputs: [xv],
      outShape: x.shape,
      out: xv,
    });
    expect(out).toBe(xv);
    expect(ex.download(out).toFloat32Array()).toEqual(want);
    ex.release(xv);
  });

  it("errors name the node and field: an unknown form, an int32 x", () => {
    const x = ex.upload(random([4], 1));
    const bad = thrown(() =>
      ex.dispatch({ kind: "gelu", node: "mlp.act", attrs: { approximate: "fast" }, inputs: [x], outShape: [4] }),
    );
    expect(AttnGraphError.isInstance(bad)).toBe(true);
    expect((bad as Error).message).toMatch(
      /^mlp\.act\.approximate: invalid attribute of op gelu, expected one of none, tanh, got "fast"/,
    );
    const ints = ex.upload(Tensor.int32([1, 2, 3], [3]));
    const e = thrown(() =>
      ex.dispatch({ kind: "gelu", node: "mlp.act", attrs: { approximate: "none" }, inputs: [ints], outShape: [3] }),
    );
    expect((e as Error).message).toMatch(/^mlp\.act\.x: .*wrong dtype, expected float32, got int32/);
    // absent approximate is the default "none"
    const y = ex.dispatch({ kind: "gelu", node: "mlp.act", attrs: {}, inputs: [x], outShape: [4] });
    expect(ex.download(y).size).toBe(4);
  });
});
