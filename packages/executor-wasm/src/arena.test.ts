// Arenas and planned outputs: `call.out` is honoured (the kernel returns it), also in place for mask, softmax and
// dropout (out is the input's own memory), and an out that aliases a strided input still gives the right numbers.
import { describe, expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import { onWasm, projectionCall, random, wasmExecutor, worst } from "./test-util.js";

const ex = await wasmExecutor();
const ops = [
  ["mask", { causal: true, window: 2, alignment: "top-left" }],
  ["softmax", { scale: 0.7 }],
  ["dropout", { rate: 0.3, seed: 5, training: true }],
  ["dropout", { rate: 0.3, seed: 5, training: false }],
] as const;

describe("wasm arenas and call.out", () => {
  for (const [kind, attrs] of ops) {
    it(`${kind} ${JSON.stringify(attrs)} in place: out is the input's memory`, () => {
      const shape = [2, 3, 6, 6];
      const x = random(shape, 3);
      const want = onWasm(ex, kind, attrs, [x], shape);
      const arena = ex.createArena(2 * 216 + 10);
      const slot = arena.view(216 + 10, shape);
      const up = ex.upload(x);
      arena.copy(up, slot);
      const got = ex.dispatch({ kind, node: kind, attrs, inputs: [slot], outShape: shape, out: slot });
      expect(got).toBe(slot);
      expect(arena.holds(got)).toBe(true);
      expect(worst(ex.download(got), want, 0, 0)).toBe(0);
      ex.release(up);
      arena.dispose();
    });

    it(`${kind} ${JSON.stringify(attrs)} with out aliasing a strided input (computed through a temporary)`, () => {
      const shape = [2, 3, 6, 6];
      const arena = ex.createArena(216);
      const base = arena.view(0, shape);
      const up = ex.upload(random(shape, 4));
      arena.copy(up, base);
      const strided = ex.dispatch({
        kind: "transpose",
        node: "t",
        attrs: { perm: [0, 1, 3, 2] },
        inputs: [base],
        outShape: shape,
      });
      const want = onWasm(ex, kind, attrs, [ex.download(strided).contiguous()], shape);
      const got = ex.dispatch({ kind, node: kind, attrs, inputs: [strided], outShape: shape, out: base });
      expect(got).toBe(base);
      expect(worst(ex.download(got), want, 0, 0)).toBe(0);
      ex.release(up);
      arena.dispose();
    });
  }

  it("projection writes into a planned out; a wrong out is an error naming <node>.out", () => {
    const x = random([2, 5], 1);
    const w = random([3, 5], 2);
    const arena = ex.createArena(100);
    const out = arena.view(40, [2, 3]);
    const [xv, wv] = [ex.upload(x), ex.upload(w)];
    expect(ex.dispatch(projectionCall("p", xv, wv, out))).toBe(out);
    expect(worst(ex.download(out), onWasm(ex, "projection", {}, [x, w, undefined], [2, 3]), 0, 0)).toBe(0);
    const bad = arena.view(0, [3, 2]);
    expect(() => ex.dispatch(projectionCall("p", xv, wv, bad))).toThrow(/^p\.out: /);
  });

  it("download of views reads only what the view reaches; released values are refused", () => {
    const t = Tensor.from([1, 2, 3, 4, 5, 6], [2, 3]);
    const v = ex.upload(t);
    const s = ex.dispatch({
      kind: "slice",
      node: "s",
      attrs: { axis: 1, start: 1, size: 2 },
      inputs: [v],
      outShape: [2, 2],
    });
    expect(Array.from(ex.download(s).toFloat32Array())).toEqual([2, 3, 5, 6]);
    ex.release(v);
    expect(Array.from(ex.download(s).toFloat32Array())).toEqual([2, 3, 5, 6]); // the view keeps the block alive
    ex.release(s);
    expect(() => ex.download(s)).toThrow(/released/);
  });
});
