// linear-gelu on wasm: bit for bit the unfused projection → gelu on this executor (both forms, with and without a
// bias, edge tiles, more than one 256-deep k block and 64-row block), close to a float64 gelu of the float64 product
// rounded to float32 (the testkit's references), on strided x, weight and bias, into a planned out, in chunks (bit
// for bit one call), and the call's errors.
import { describe, expect, it } from "vitest";
import { gelu64, linear64 } from "@attngraph/testkit";
import { AttnGraphError, Tensor, type Shape } from "@attngraph/tensor";
import type { WasmExecutor } from "../executor.js";
import { f64, onWasm, onWasmViews, random, thrown, wasmExecutor, worst } from "../test-util.js";

const ex = await wasmExecutor();

/** The exact bits of a tensor's elements, row-major. */
const bits = (t: Tensor): Uint32Array => new Uint32Array(Float32Array.from(t.toFloat32Array()).buffer);

/** gelu(x · Wᵀ + b) in float64, the product rounded to float32 first (as the pair hands it on). */
function want(x: Tensor, w: Tensor, b: Tensor | undefined, approximate: "none" | "tanh"): Tensor {
  const [nOut, nIn] = w.shape as [number, number];
  const pre = Float64Array.from(Float32Array.from(linear64(f64(x), nIn, f64(w), nOut, b && f64(b))));
  return new Tensor(Float32Array.from(gelu64(pre, approximate)), [...x.shape.slice(0, -1), nOut]);
}

/** projection then gelu, two dispatches on `on`. */
function pair(
  on: WasmExecutor,
  x: Tensor,
  w: Tensor,
  b: Tensor | undefined,
  approximate: "none" | "tanh",
  views = false,
): Tensor {
  const run = views ? onWasmViews : onWasm;
  const shape: Shape = [...x.shape.slice(0, -1), w.shape[0]!];
  const pre = run(on, "projection", {}, [x, w, b], shape);
  return onWasm(on, "gelu", { approximate }, [pre], shape);
}

describe("linear-gelu on wasm", () => {
  const shapes = [
    [1, 1, 1],
    [3, 5, 7],
    [67, 300, 13],
    [130, 40, 33],
    [8, 16, 8],
  ] as const;
  for (const approximate of ["none", "tanh"] as const) {
    for (const [rows, nIn, nOut] of shapes) {
      it(`${approximate}: [2, ${rows}, ${nIn}] · [${nOut}, ${nIn}]ᵀ (+ bias): the unfused pair bit for bit, float64 within 1e-5`, () => {
        const x = random([2, rows, nIn], rows + nIn, 2);
        const w = random([nOut, nIn], nOut, 0.5);
        const b = random([nOut], 7);
        for (const bias of [b, undefined]) {
          const got = onWasm(ex, "linear-gelu", { approximate }, [x, w, bias], [2, rows, nOut]);
          expect(got.shape).toEqual([2, rows, nOut]);
          expect(bits(got)).toEqual(bits(pair(ex, x, w, bias, approximate)));
          expect(worst(got, want(x, w, bias, approximate), 1e-5, 1e-4)).toBeLessThan(1);
        }
      });
    }
  }

  it("strided x (rows with one stride, and strided along In), a transposed weight and a strided bias, read in place", () => {
    const rowsStrided = random([70, 2, 33], 1).permute([1, 0, 2]); // [2, 70, 33], leading axes swapped
    const alongIn = random([2, 33, 70], 2).permute([0, 2, 1]); // [2, 70, 33], In strided: copied dense first
    const w = random([33, 17], 3).permute([1, 0]); // [17, 33] transposed
    const bias = new Tensor(random([40], 4).data, [17], [2], 3); // [17] read with stride 2 from offset 3
    for (const approximate of ["none", "tanh"] as const) {
      for (const x of [rowsStrided, alongIn]) {
        for (const b of [bias, undefined]) {
          const got = onWasmViews(ex, "linear-gelu", { approximate }, [x, w, b], [2, 70, 17]);
          expect(bits(got)).toEqual(bits(pair(ex, x, w, b, approximate, true)));
          expect(worst(got, want(x, w, b, approximate), 1e-5, 1e-4)).toBeLessThan(1);
        }
      }
    }
  });

  it("a rank-1 x, and empty rows or outputs", () => {
    const x = random([9], 5);
    const w = random([6, 9], 6);
    expect(bits(onWasm(ex, "linear-gelu", { approximate: "tanh" }, [x, w, undefined], [6]))).toEqual(
      bits(pair(ex, x, w, undefined, "tanh")),
    );
    expect(
      onWasm(ex, "linear-gelu", { approximate: "none" }, [random([0, 4], 7), random([3, 4], 8), undefined], [0, 3])
        .size,
    ).toBe(0);
    expect(
      onWasm(ex, "linear-gelu", { approximate: "none" }, [random([2, 4], 7), random([0, 4], 8), undefined], [2, 0])
        .size,
    ).toBe(0);
  });

  it("writes into a planned out (an arena view) and leaves nothing allocated", async () => {
    const on = await wasmExecutor();
    const x = random([5, 12], 9);
    const w = random([20, 12], 10);
    const xv = on.upload(x);
    const wv = on.upload(w);
    const arena = on.createArena(100);
    const out = arena.view(0, [5, 20]);
    const got = on.dispatch({
      kind: "linear-gelu",
      node: "mlp.act",
      attrs: { approximate: "none" },
      inputs: [xv, wv, undefined],
      outShape: [5, 20],
      out,
    });
    expect(got).toBe(out);
    expect(bits(on.download(got))).toEqual(bits(pair(ex, x, w, undefined, "none")));
    arena.dispose();
    on.release(xv);
    on.release(wv);
    expect(on.inUseBytes).toBe(0);
  });

  it("in chunks of a tiny chunkWork: bit for bit one call, nothing left allocated", async () => {
    const tiny = await wasmExecutor({ chunkWork: 1 });
    const x = random([3, 5, 48], 11).permute([1, 0, 2]); // leading axes that do not collapse: copied first
    const w = random([40, 48], 12);
    const b = random([40], 13);
    for (const approximate of ["none", "tanh"] as const) {
      const xv = tiny.upload(x);
      const wv = tiny.upload(w);
      const bv = tiny.upload(b);
      const pending = tiny.dispatch({
        kind: "linear-gelu",
        node: "act",
        attrs: { approximate },
        inputs: [xv, wv, bv],
        outShape: [5, 3, 40],
        signal: new AbortController().signal,
      });
      expect(pending).toBeInstanceOf(Promise);
      const out = await pending;
      expect(bits(tiny.download(out))).toEqual(bits(onWasm(ex, "linear-gelu", { approximate }, [x, w, b], [5, 3, 40])));
      for (const v of [out, xv, wv, bv]) tiny.release(v);
    }
    expect(tiny.inUseBytes).toBe(0);
  });

  it("errors name the node and field: approximate, weight columns, bias length and rank, a scalar x, an int32 x", () => {
    const x = ex.upload(random([2, 4], 15));
    const w = ex.upload(random([3, 4], 16));
    const call = (attrs: Record<string, unknown>, inputs: unknown[], outShape = [2, 3]) =>
      thrown(() =>
        ex.dispatch({ kind: "linear-gelu", node: "blocks.0.mlp.act", attrs, inputs: inputs as never, outShape }),
      ) as AttnGraphError;
    for (const approximate of ["erf", 1, true, "Tanh"]) {
      const e = call({ approximate }, [x, w]);
      expect(AttnGraphError.isInstance(e)).toBe(true);
      expect(e.message).toMatch(/^blocks\.0\.mlp\.act\.approximate: /);
    }
    const ok = { approximate: "none" };
    expect(call(ok, [x, ex.upload(random([3, 5], 17))]).message).toMatch(
      /^blocks\.0\.mlp\.act\.weight: weight columns must equal the input's last dim, expected 4, got 5/,
    );
    expect(call(ok, [x, ex.upload(random([12], 17))]).message).toMatch(
      /^blocks\.0\.mlp\.act\.weight: input must have rank 2/,
    );
    expect(call(ok, [x, w, ex.upload(random([4], 18))]).message).toMatch(
      /^blocks\.0\.mlp\.act\.bias: bias length must equal the weight's rows, expected 3, got 4/,
    );
    expect(call(ok, [x, w, ex.upload(random([1, 3], 18))]).message).toMatch(
      /^blocks\.0\.mlp\.act\.bias: input must have rank 1/,
    );
    expect(call(ok, [ex.upload(random([], 19)), w], [3]).message).toMatch(
      /^blocks\.0\.mlp\.act\.x: input must have at least one axis/,
    );
    expect(call(ok, [x]).message).toMatch(/^blocks\.0\.mlp\.act\.weight: missing required input 1/);
    const e = call(ok, [ex.upload(Tensor.int32([1, 2, 3, 4, 5, 6, 7, 8], [2, 4])), w]);
    expect(e.message).toMatch(
      /^blocks\.0\.mlp\.act\.x: input 0 \(x\) of op linear-gelu has the wrong dtype, expected float32, got int32/,
    );
    expect(e.code).toBe("input");
  });
});
