// layer-norm on wasm against the testkit's float64 LayerNorm (two-pass, biased variance): dense rows of every length
// mod 4 (the f64x2 body and its tail), strided x, weight and bias (the scalar path), constant rows (exactly the bias),
// rows far from 0, NaN rows, in place, and the call's errors.
import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { layerNorm64 } from "@attngraph/testkit";
import { f64, onWasm, onWasmViews, random, thrown, wasmExecutor, worst } from "../test-util.js";
import { WasmValue } from "../value.js";

const ex = await wasmExecutor();

const want = (x: Tensor, e: number, eps: number, w?: Tensor, b?: Tensor) =>
  new Tensor(Float32Array.from(layerNorm64(f64(x), e, eps, w && f64(w), b && f64(b))), x.shape);

describe("layer-norm on wasm", () => {
  for (const e of [1, 2, 3, 4, 5, 8, 37, 300]) {
    it(`dense rows of E=${e}, affine and plain`, () => {
      const x = random([3, 4, e], e, 2);
      const w = random([e], e + 1);
      const b = random([e], e + 2);
      expect(worst(onWasm(ex, "layer-norm", { eps: 1e-5 }, [x, w, b], x.shape), want(x, e, 1e-5, w, b))).toBeLessThan(
        1,
      );
      expect(
        worst(onWasm(ex, "layer-norm", { eps: 1e-3 }, [x, undefined, undefined], x.shape), want(x, e, 1e-3)),
      ).toBeLessThan(1);
      expect(
        worst(onWasm(ex, "layer-norm", { eps: 1e-5 }, [x, w, undefined], x.shape), want(x, e, 1e-5, w)),
      ).toBeLessThan(1);
      expect(
        worst(onWasm(ex, "layer-norm", { eps: 1e-5 }, [x, undefined, b], x.shape), want(x, e, 1e-5, undefined, b)),
      ).toBeLessThan(1);
    });
  }

  it("a strided x (last axis not contiguous) and strided weight and bias take the scalar path, same numbers", () => {
    const e = 13;
    const x = random([2, e, 5], 1).permute([0, 2, 1]); // [2, 5, E], E strided by 5
    const w = random([e, 2], 2).permute([1, 0]); // [2, E]: row 0 is a stride-2 vector
    const b = random([e, 3], 3).permute([1, 0]);
    const wv = new Tensor(w.data, [e], [2], 0);
    const bv = new Tensor(b.data, [e], [3], 1);
    const got = onWasmViews(ex, "layer-norm", { eps: 1e-5 }, [x, wv, bv], [2, 5, e]);
    expect(worst(got, want(x, e, 1e-5, wv, bv))).toBeLessThan(1);
    // a dense x with strided weight only
    const xd = random([4, e], 4);
    expect(
      worst(onWasmViews(ex, "layer-norm", { eps: 1e-5 }, [xd, wv, undefined], [4, e]), want(xd, e, 1e-5, wv)),
    ).toBeLessThan(1);
  });

  it("a permuted x whose rows are still contiguous (leading axes swapped) takes the vector path", () => {
    const x = random([6, 3, 16], 5).permute([1, 0, 2]);
    expect(
      worst(onWasmViews(ex, "layer-norm", { eps: 1e-5 }, [x, undefined, undefined], [3, 6, 16]), want(x, 16, 1e-5)),
    ).toBeLessThan(1);
  });

  it("a constant row gives exactly the bias (0 without one), never NaN, on both paths", () => {
    for (const e of [7, 16]) {
      const rows = [3.25, -1e4, 0, 1e30].flatMap((c) => new Array<number>(e).fill(c));
      const x = Tensor.from(rows, [4, e]);
      const b = random([e], 9);
      const w = random([e], 10);
      const out = onWasm(ex, "layer-norm", { eps: 1e-5 }, [x, w, b], [4, e]).toFloat32Array();
      for (let r = 0; r < 4; r++)
        expect(Array.from(out.slice(r * e, (r + 1) * e)), `row ${r}, E=${e}`).toEqual(Array.from(b.toFloat32Array()));
      const plain = onWasm(ex, "layer-norm", { eps: 1e-5 }, [x, undefined, undefined], [4, e]).toFloat32Array();
      expect(plain.every((v) => v === 0)).toBe(true);
      // strided: the same rows read with a stride
      const xt = Tensor.from(rows, [4, e]).transpose(0, 1).contiguous().transpose(0, 1);
      const strided = onWasmViews(ex, "layer-norm", { eps: 1e-5 }, [xt, w, b], [4, e]).toFloat32Array();
      for (let r = 0; r < 4; r++)
        expect(Array.from(strided.slice(r * e, (r + 1) * e))).toEqual(Array.from(b.toFloat32Array()));
    }
  });

  it("rows offset by 1e4 keep their small deviations (float64 x − mean)", () => {
    const e = 8;
    const x = Tensor.from(
      Array.from({ length: 3 * e }, (_, i) => 1e4 + ((i * 7) % 5) * 0.25 - (i % 3) * 0.125),
      [3, e],
    );
    const got = onWasm(ex, "layer-norm", { eps: 1e-5 }, [x, undefined, undefined], x.shape);
    expect(worst(got, want(x, e, 1e-5), 1e-5, 1e-5)).toBeLessThan(1);
  });

  it("a NaN or ±∞ makes its own row NaN and leaves the others alone", () => {
    const x = random([3, 9], 11).contiguous();
    x.data[4] = NaN;
    x.data[9 + 2] = Infinity;
    const out = onWasm(ex, "layer-norm", { eps: 1e-5 }, [x, undefined, undefined], x.shape).toFloat32Array();
    expect(out.slice(0, 18).every(Number.isNaN)).toBe(true);
    expect(out.slice(18).some(Number.isNaN)).toBe(false);
  });

  it("runs in place (out = x's own memory), as the planner may ask", () => {
    const x = random([5, 24], 12);
    const w = random([24], 13);
    const xv = ex.upload(x);
    const wv = ex.upload(w);
    const out = ex.dispatch({
      kind: "layer-norm",
      node: "ln",
      attrs: { eps: 1e-5 },
      inputs: [xv, wv, undefined],
      outShape: x.shape,
      out: xv,
    });
    expect(out).toBe(xv);
    expect(worst(ex.download(out), want(x, 24, 1e-5, w))).toBeLessThan(1);
    ex.release(xv);
    ex.release(wv);
  });

  it("an out aliasing a strided x is computed through a temporary", () => {
    const x = random([24, 5], 14);
    const arena = ex.createArena(120);
    const storage = ex.upload(new Tensor(x.data, [120]));
    arena.copy(storage, arena.view(0, [120]));
    ex.release(storage);
    const xt = new WasmValue(arena.block, [5, 24], [1, 5], 0); // x transposed, read from the arena's block
    const out = arena.view(0, [5, 24]); // the same elements, written row-major: would clobber xt
    const got = ex.dispatch({
      kind: "layer-norm",
      node: "ln",
      attrs: { eps: 1e-5 },
      inputs: [xt, undefined, undefined],
      outShape: [5, 24],
      out,
    });
    expect(got).toBe(out);
    expect(worst(ex.download(got), want(x.transpose(0, 1), 24, 1e-5))).toBeLessThan(1);
    arena.dispose();
  });

  it("errors name the node and field: eps, weight length and rank, a scalar x, an int32 x", () => {
    const x = ex.upload(random([2, 4], 15));
    const call = (attrs: Record<string, unknown>, inputs: unknown[], outShape = [2, 4]) =>
      thrown(() => ex.dispatch({ kind: "layer-norm", node: "blocks.0.ln1", attrs, inputs: inputs as never, outShape }));
    for (const eps of [0, -1, NaN, Infinity, "1e-5"]) {
      const e = call({ eps }, [x]);
      expect(AttnGraphError.isInstance(e)).toBe(true);
      expect((e as Error).message).toMatch(/^blocks\.0\.ln1\.eps: /);
    }
    expect((call({ eps: 1e-5 }, [x, ex.upload(random([5], 1))]) as Error).message).toMatch(
      /^blocks\.0\.ln1\.weight: .*expected 4, got 5/,
    );
    expect((call({ eps: 1e-5 }, [x, undefined, ex.upload(random([2, 4], 1))]) as Error).message).toMatch(
      /^blocks\.0\.ln1\.bias: input must have rank 1/,
    );
    expect((call({ eps: 1e-5 }, [ex.upload(random([], 1))], []) as Error).message).toMatch(
      /^blocks\.0\.ln1\.x: layer norm needs at least one axis/,
    );
    const e = call({ eps: 1e-5 }, [ex.upload(Tensor.int32([1, 2, 3, 4, 5, 6, 7, 8], [2, 4]))]) as AttnGraphError;
    expect(e.message).toMatch(
      /^blocks\.0\.ln1\.x: input 0 \(x\) of op layer-norm has the wrong dtype, expected float32, got int32/,
    );
    expect(e.code).toBe("input");
  });
});
