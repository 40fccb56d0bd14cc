// add-layer-norm on wasm: each row of the output is [a + b | LayerNorm(a + b)], bit for bit the unfused add → layer-norm
// on this executor, and against float64 (the testkit's references: the sums exact, the norm of the float32 sums within
// float32 rounding). Rows of every length mod 4 (the vector bodies and their tails), many rows and a long one,
// broadcasting (b [1, T, E] over [B, T, E], a bias [E], a over more axes), strided a, b, weight and bias, no
// affine, rows far from 0 and constant rows, a planned out, chunks (bit for bit one call), and the call's errors.
import { describe, expect, it } from "vitest";
import { add64, layerNorm64 } from "@attngraph/testkit";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import type { WasmExecutor } from "../executor.js";
import { f64, onWasm, onWasmViews, random, thrown, wasmExecutor, worst } from "../test-util.js";

const ex = await wasmExecutor();

/** The exact bits of a tensor's elements, row-major. */
const bits = (t: Tensor): Uint32Array => new Uint32Array(Float32Array.from(t.toFloat32Array()).buffer);

/** [sum | norm] side by side: rows of `e` from each, interleaved into rows of 2e. */
function sideBySide(sum: ArrayLike<number>, norm: ArrayLike<number>, lead: readonly number[], e: number): Tensor {
  const rows = lead.reduce((p, d) => p * d, 1);
  const out = new Float32Array(rows * 2 * e);
  for (let r = 0; r < rows; r++) {
    for (let j = 0; j < e; j++) {
      out[r * 2 * e + j] = sum[r * e + j]!;
      out[r * 2 * e + e + j] = norm[r * e + j]!;
    }
  }
  return new Tensor(out, [...lead, 2 * e]);
}

/** The two halves of a [..., 2E] result as [..., E] tensors. */
function halves(t: Tensor): [Tensor, Tensor] {
  const e = t.shape[t.rank - 1]! / 2;
  const data = t.toFloat32Array();
  const rows = e === 0 ? 0 : data.length / (2 * e);
  const sum = new Float32Array(rows * e);
  const norm = new Float32Array(rows * e);
  for (let r = 0; r < rows; r++) {
    sum.set(data.subarray(r * 2 * e, r * 2 * e + e), r * e);
    norm.set(data.subarray(r * 2 * e + e, (r + 1) * 2 * e), r * e);
  }
  const shape = [...t.shape.slice(0, -1), e];
  return [new Tensor(sum, shape), new Tensor(norm, shape)];
}

/** The float64 reference: the sums rounded to float32 (exact), their layer norm in float64. */
function want(a: Tensor, b: Tensor, eps: number, w?: Tensor, bias?: Tensor): { sum: Tensor; norm: Tensor } {
  const s = add64(f64(a), a.shape, f64(b), b.shape);
  const e = s.shape[s.shape.length - 1]!;
  const sum32 = Float32Array.from(s.data);
  const norm = layerNorm64(Float64Array.from(sum32), e, eps, w && f64(w), bias && f64(bias));
  return { sum: new Tensor(sum32, s.shape), norm: new Tensor(Float32Array.from(norm), s.shape) };
}

/** add then layer-norm, two dispatches on `on`, laid side by side. */
function pair(on: WasmExecutor, a: Tensor, b: Tensor, eps: number, w?: Tensor, bias?: Tensor, views = false): Tensor {
  const shape = want(a, b, eps).sum.shape;
  const e = shape[shape.length - 1]!;
  const s = (views ? onWasmViews : onWasm)(on, "add", {}, [a, b], shape);
  const ln = (views ? onWasmViews : onWasm)(on, "layer-norm", { eps }, [s, w, bias], shape);
  return sideBySide(s.toFloat32Array(), ln.toFloat32Array(), shape.slice(0, -1), e);
}

/** Runs add-layer-norm and checks it against the pair (bits) and float64 (sums exact, norm close). */
function check(
  a: Tensor,
  b: Tensor,
  eps: number,
  w?: Tensor,
  bias?: Tensor,
  views = false,
  tol: [number, number] = [1e-5, 1e-4],
): void {
  const ref = want(a, b, eps, w, bias);
  const shape = ref.sum.shape;
  const e = shape[shape.length - 1]!;
  const outShape = [...shape.slice(0, -1), 2 * e];
  const got = (views ? onWasmViews : onWasm)(ex, "add-layer-norm", { eps }, [a, b, w, bias], outShape);
  expect(got.shape).toEqual(outShape);
  expect(bits(got)).toEqual(bits(pair(ex, a, b, eps, w, bias, views)));
  const [sum, norm] = halves(got);
  expect(Array.from(sum.toFloat32Array())).toEqual(Array.from(ref.sum.toFloat32Array()));
  expect(worst(norm, ref.norm, ...tol)).toBeLessThan(1);
}

describe("add-layer-norm on wasm", () => {
  for (const e of [1, 2, 3, 4, 5, 8, 37, 300]) {
    it(`rows of E=${e}: the pair bit for bit, float64 close; affine, weight or bias only, plain`, () => {
      const a = random([3, 4, e], e, 2);
      const b = random([3, 4, e], e + 1);
      const w = random([e], e + 2);
      const bias = random([e], e + 3);
      check(a, b, 1e-5, w, bias);
      check(a, b, 1e-3);
      check(a, b, 1e-5, w);
      check(a, b, 1e-5, undefined, bias);
    });
  }

  it("many rows in one module call, and a long row broadcast against a bias [E]", () => {
    check(random([2, 150, 37], 1), random([2, 150, 37], 2), 1e-5, random([37], 3), random([37], 4));
    check(random([3, 2051], 5), random([2051], 6), 1e-5, random([2051], 7), undefined);
  });

  it("broadcasting: b [1, T, E] over [B, T, E] (and a over b), a bias [E], a [T, E] over [B, T, E], both stretching", () => {
    const x = random([3, 7, 12], 11);
    const pos = random([1, 7, 12], 12);
    const w = random([12], 13);
    const bias = random([12], 14);
    check(x, pos, 1e-5, w, bias);
    check(pos, x, 1e-5, w, bias);
    check(x, random([12], 15), 1e-5);
    check(random([7, 12], 16), x, 1e-5, w, undefined);
    check(random([3, 1, 12], 17), random([1, 7, 1], 18), 1e-5, w, bias);
    check(random([2, 1, 3, 1, 9], 19), random([1, 4, 1, 2, 9], 20), 1e-5);
  });

  it("strided a and b (permuted, transposed, an offset), strided weight and bias: same bits as the pair on the same views", () => {
    const E = 13;
    const a = random([E, 7, 2], 21).permute([2, 1, 0]); // [2, 7, E], nothing contiguous
    const b = random([2, 7, E], 22);
    const pos = random([1, E, 7], 23).permute([0, 2, 1]); // [1, 7, E] strided
    const w = new Tensor(random([2 * E], 24).data, [E], [2], 0);
    const bias = new Tensor(random([3 * E], 25).data, [E], [3], 1);
    check(a, b, 1e-5, w, bias, true);
    check(b, a, 1e-5, undefined, undefined, true);
    check(a, pos, 1e-5, w, undefined, true);
    check(b.permute([1, 0, 2]), pos.permute([1, 0, 2]), 1e-5, undefined, bias, true); // [7, 2, E] + [7, 1, E]
    // dense inputs, strided affine only (the layer norm's scalar path, on both sides)
    check(
      random([4, 16], 26),
      random([4, 16], 27),
      1e-5,
      new Tensor(random([32], 28).data, [16], [2], 0),
      undefined,
      true,
    );
  });

  it("rows far from 0 keep their small deviations; constant rows give exactly the bias; a NaN spoils its own row only", () => {
    const e = 8;
    const big = Tensor.from(
      Array.from({ length: 3 * e }, (_, i) => 1e4 + ((i * 7) % 5) * 0.25),
      [3, e],
    );
    const small = Tensor.from(
      Array.from({ length: 3 * e }, (_, i) => -((i % 3) * 0.125)),
      [3, e],
    );
    check(big, small, 1e-5, undefined, undefined, false, [1e-5, 1e-5]);
    const bias = random([e], 29);
    const constant = onWasm(
      ex,
      "add-layer-norm",
      { eps: 1e-5 },
      [Tensor.from(new Array<number>(2 * e).fill(3.25), [2, e]), Tensor.from([-1e4], [1]), random([e], 30), bias],
      [2, 2 * e],
    );
    const [sum, norm] = halves(constant);
    expect(sum.toFloat32Array().every((v) => v === 3.25 - 1e4)).toBe(true);
    for (let r = 0; r < 2; r++)
      expect(Array.from(norm.toFloat32Array().slice(r * e, (r + 1) * e))).toEqual(Array.from(bias.toFloat32Array()));
    const nan = random([3, e], 31).contiguous();
    nan.data[e + 2] = NaN;
    const [s2, n2] = halves(
      onWasm(ex, "add-layer-norm", { eps: 1e-5 }, [nan, random([e], 32), undefined, undefined], [3, 2 * e]),
    );
    expect(Number.isNaN(s2.toFloat32Array()[e + 2]!)).toBe(true);
    expect(
      n2
        .toFloat32Array()
        .slice(e, 2 * e)
        .every(Number.isNaN),
    ).toBe(true);
    expect([...n2.toFloat32Array().slice(0, e), ...n2.toFloat32Array().slice(2 * e)].some(Number.isNaN)).toBe(false);
  });

  it("empty: no rows, or E = 0", () => {
    expect(
      onWasm(ex, "add-layer-norm", { eps: 1e-5 }, [random([0, 4], 1), random([4], 2), undefined, undefined], [0, 8])
        .shape,
    ).toEqual([0, 8]);
    expect(
      onWasm(ex, "add-layer-norm", { eps: 1e-5 }, [random([3, 0], 1), random([0], 2), undefined, undefined], [3, 0])
        .shape,
    ).toEqual([3, 0]);
  });

  it("writes into a planned out (an arena view) and leaves nothing allocated", async () => {
    const on = await wasmExecutor();
    const a = random([2, 5, 12], 33);
    const b = random([1, 5, 12], 34);
    const w = random([12], 35);
    const [av, bv, wv] = [a, b, w].map((t) => on.upload(t));
    const arena = on.createArena(300);
    const out = arena.view(16, [2, 5, 24]);
    const got = on.dispatch({
      kind: "add-layer-norm",
      node: "ln2",
      attrs: { eps: 1e-5 },
      inputs: [av, bv, wv, undefined],
      outShape: [2, 5, 24],
      out,
    });
    expect(got).toBe(out);
    expect(bits(on.download(got))).toEqual(bits(pair(ex, a, b, 1e-5, w)));
    arena.dispose();
    for (const v of [av!, bv!, wv!]) on.release(v);
    expect(on.inUseBytes).toBe(0);
  });

  it("in chunks of a tiny chunkWork: bit for bit one call, nothing left allocated", async () => {
    const tiny = await wasmExecutor({ chunkWork: 1 });
    const a = random([3, 1, 5, 40, 6], 36).permute([0, 2, 1, 3, 4]).reshape([3, 5, 40, 6]); // outer axes walked on the host
    const b = random([5, 1, 6], 37);
    const w = random([6], 38);
    const bias = random([6], 39);
    const inputs = [a, b, w, bias].map((t) => tiny.upload(t));
    const pending = tiny.dispatch({
      kind: "add-layer-norm",
      node: "ln2",
      attrs: { eps: 1e-5 },
      inputs,
      outShape: [3, 5, 40, 12],
      signal: new AbortController().signal,
    });
    expect(pending).toBeInstanceOf(Promise);
    const out = await pending;
    expect(bits(tiny.download(out))).toEqual(
      bits(onWasm(ex, "add-layer-norm", { eps: 1e-5 }, [a, b, w, bias], [3, 5, 40, 12])),
    );
    for (const v of [out, ...inputs]) tiny.release(v);
    expect(tiny.inUseBytes).toBe(0);
  });

  it("errors name the node and field: eps, shapes that do not broadcast, outShape, weight and bias, a scalar sum, an int32 input", () => {
    const a = ex.upload(random([2, 4], 40));
    const b = ex.upload(random([4], 41));
    const call = (attrs: Record<string, unknown>, inputs: unknown[], outShape = [2, 8]) =>
      thrown(() =>
        ex.dispatch({ kind: "add-layer-norm", node: "blocks.0.ln2", attrs, inputs: inputs as never, outShape }),
      ) as AttnGraphError;
    for (const eps of [0, -1, NaN, Infinity, "1e-5"]) {
      const e = call({ eps }, [a, b]);
      expect(AttnGraphError.isInstance(e)).toBe(true);
      expect(e.message).toMatch(/^blocks\.0\.ln2\.eps: /);
    }
    const ok = { eps: 1e-5 };
    expect(call(ok, [a, ex.upload(random([3], 42))]).message).toMatch(
      /^blocks\.0\.ln2\.b: shapes do not broadcast at axis 0 from the end, expected 4 or 1, got 3/,
    );
    expect(call(ok, [a, b], [2, 4]).message).toMatch(
      /^blocks\.0\.ln2\.outShape: the output shape of op add-layer-norm/,
    );
    expect(call(ok, [a, b], [2, 7]).message).toMatch(
      /^blocks\.0\.ln2\.outShape: the output shape of op add-layer-norm/,
    );
    expect(call(ok, [a, b, ex.upload(random([5], 43))]).message).toMatch(
      /^blocks\.0\.ln2\.weight: .*expected 4, got 5/,
    );
    expect(call(ok, [a, b, undefined, ex.upload(random([2, 4], 44))]).message).toMatch(
      /^blocks\.0\.ln2\.bias: input must have rank 1/,
    );
    expect(call(ok, [ex.upload(random([], 45)), ex.upload(random([], 46))], []).message).toMatch(
      /^blocks\.0\.ln2\.a: add-layer-norm needs at least one axis/,
    );
    expect(call(ok, [a]).message).toMatch(/^blocks\.0\.ln2\.b: missing required input 1/);
    const e = call(ok, [a, ex.upload(Tensor.int32([1, 2, 3, 4], [4]))]);
    expect(e.message).toMatch(
      /^blocks\.0\.ln2\.b: input 1 \(b\) of op add-layer-norm has the wrong dtype, expected float32, got int32/,
    );
    expect(e.code).toBe("input");
  });
});
