// kv-append on wasm: two appends into one cache value (the second run passes the same value again) give views of the
// cache's own block whose values are the concatenation, with positions past past + L untouched; x strided (heads split
// from [B, L, H, D]) and a strided cache; the in-place write drops the cache's prepacked matmul layout and stops a trap
// from restoring the cache's upload-time contents; bad calls are typed errors naming the node.
import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor, ShapeError } from "@attngraph/tensor";
import { WasmValue } from "../value.js";
import { random, thrown, uploadView, wasmExecutor, trapKernel } from "../test-util.js";

const ex = await wasmExecutor();
const SENTINEL = 7.5;
const [B, H, M, D] = [2, 3, 6, 4];

/** A cache [B, H, M, D] filled with SENTINEL, so positions never written show it. */
const sentinelCache = (shape: number[] = [B, H, M, D]) =>
  new Tensor(new Float32Array(shape.reduce((p, d) => p * d, 1)).fill(SENTINEL), shape);

const append = (cache: WasmValue, x: WasmValue, past: unknown, node = "blocks.0.attn.keys.cache") => {
  const outShape = [
    cache.shape[0]!,
    cache.shape[1]!,
    (typeof past === "number" ? past : 0) + x.shape[2]!,
    cache.shape[3]!,
  ];
  return ex.dispatch({ kind: "kv-append", node, attrs: { past, length: "S" }, inputs: [cache, x], outShape });
};

/** The row-major values of a [B, H, L1 + L2, D] concatenation of a and b along dim 2, then `pad` rows of `fill`. */
function concat(a: Tensor, b: Tensor, pad = 0, fill = SENTINEL): number[] {
  const [nb, nh, l1, nd] = a.shape as [number, number, number, number];
  const l2 = b.shape[2]!;
  const out: number[] = [];
  for (let i = 0; i < nb; i++)
    for (let h = 0; h < nh; h++) {
      for (let l = 0; l < l1; l++) for (let d = 0; d < nd; d++) out.push(a.get(i, h, l, d));
      for (let l = 0; l < l2; l++) for (let d = 0; d < nd; d++) out.push(b.get(i, h, l, d));
      for (let l = 0; l < pad * nd; l++) out.push(fill);
    }
  return out;
}

const values = (v: WasmValue) => Array.from(ex.download(v).contiguous().toFloat32Array());

describe("kv-append on wasm", () => {
  it("two appends into one cache: views of its block holding the concatenation; later positions untouched", () => {
    const cache = ex.upload(sentinelCache());
    // First call (a prefill): L = 3, x heads split from [B, L, H, D], so its strides are not row-major.
    const x1 = random([B, 3, H, D], 1).permute([0, 2, 1, 3]);
    const v1 = uploadView(ex, x1);
    const y1 = append(cache, v1, 0);
    expect(y1.shape).toEqual([B, H, 3, D]);
    expect([y1.block, y1.strides, y1.offset]).toEqual([cache.block, cache.strides, cache.offset]);
    expect(values(y1)).toEqual(Array.from(x1.contiguous().toFloat32Array()));
    ex.release(y1);
    ex.release(v1);
    // Second call (a decode step of 2 tokens), the same cache value again: x dense.
    const x2 = random([B, H, 2, D], 2);
    const v2 = ex.upload(x2);
    const y2 = append(cache, v2, 3);
    expect(y2.shape).toEqual([B, H, 5, D]);
    expect(values(y2)).toEqual(concat(x1, x2));
    expect(values(cache)).toEqual(concat(x1, x2, M - 5)); // position 5 was never written
    for (const v of [y2, v2, cache]) ex.release(v);
    expect(cache.block.freed).toBe(true); // the views held references and gave them back
  });

  it("with shift, positions [shift, shift + past) move to the front first (a window's ring), then x follows them", () => {
    const host = random([B, H, M, D], 11);
    const cache = ex.upload(host);
    const x = random([B, H, 1, D], 12);
    const vx = ex.upload(x);
    const y = ex.dispatch({
      kind: "kv-append",
      node: "k.cache",
      attrs: { past: 2, shift: 3, length: "S" },
      inputs: [cache, vx],
      outShape: [B, H, 3, D],
    }) as WasmValue;
    const got = ex.download(y).contiguous();
    for (let i = 0; i < B; i++)
      for (let h = 0; h < H; h++)
        for (let d = 0; d < D; d++)
          expect([got.get(i, h, 0, d), got.get(i, h, 1, d), got.get(i, h, 2, d)]).toEqual([
            host.get(i, h, 3, d),
            host.get(i, h, 4, d),
            x.get(i, h, 0, d),
          ]);
    for (const v of [y, vx, cache]) ex.release(v);
  });

  it("a strided cache (stored [B, H, D, M]) and L = 0", () => {
    const storage = sentinelCache([B, H, D, M]);
    const cache = uploadView(ex, storage.permute([0, 1, 3, 2]));
    const x = random([B, H, 2, D], 3);
    const vx = ex.upload(x);
    const y = append(cache, vx, 1);
    const want = concat(sentinelCache([B, H, 1, D]), x, M - 3);
    expect(values(cache)).toEqual(want);
    expect(y.strides).toEqual(cache.strides);
    const empty = ex.upload(new Tensor(new Float32Array(0), [B, H, 0, D]));
    const y0 = append(cache, empty, 3);
    expect(y0.shape).toEqual([B, H, 3, D]);
    expect(values(cache)).toEqual(want);
    for (const v of [y, y0, empty, vx, cache]) ex.release(v);
  });

  it("drops the prepacked layout of a cache read as a matmul weight: the next product sees the new rows", () => {
    const hostX = random([1, D], 4);
    const px = ex.upload(hostX);
    const cache = ex.upload(sentinelCache([1, 1, M, D]));
    const w = ex.dispatch({ kind: "reshape", node: "w", attrs: { shape: [M, D] }, inputs: [cache], outShape: [M, D] });
    const project = () => {
      const y = ex.dispatch({ kind: "projection", node: "p", attrs: {}, inputs: [px, w, undefined], outShape: [1, M] });
      const host = values(y);
      ex.release(y);
      return host;
    };
    const before = project();
    const made = ex.prepacked.made;
    const x = random([1, 1, M, D], 5);
    const vx = ex.upload(x);
    ex.release(append(cache, vx, 0));
    const after = project();
    expect(after).not.toEqual(before);
    const rows = x.toFloat32Array();
    const xs = hostX.toFloat32Array();
    after.forEach((got, m) =>
      expect(got).toBeCloseTo(
        xs.reduce((s, v, d) => s + v * rows[m * D + d]!, 0),
        5,
      ),
    );
    expect(ex.prepacked.made).toBe(made); // packed per call now: the cache is no longer an unchanging upload
    for (const v of [w, vx, cache, px]) ex.release(v);
  });

  it("after a trap, a cache written in place is an error to use, not its upload-time contents restored", async () => {
    const own = await wasmExecutor();
    own.registerKernel("trap", trapKernel);
    const cache = own.upload(sentinelCache());
    const untouched = own.upload(sentinelCache());
    const vx = own.upload(random([B, H, 1, D], 6));
    own.release(
      own.dispatch({
        kind: "kv-append",
        node: "k.cache",
        attrs: { past: 0, length: "S" },
        inputs: [cache, vx],
        outShape: [B, H, 1, D],
      }),
    );
    expect(
      (
        thrown(() =>
          own.dispatch({ kind: "trap", node: "t", attrs: {}, inputs: [vx], outShape: vx.shape }),
        ) as AttnGraphError
      ).code,
    ).toBe("wasm-trap");
    const e = thrown(() =>
      own.dispatch({
        kind: "kv-append",
        node: "k.cache",
        attrs: { past: 1, length: "S" },
        inputs: [cache, untouched],
        outShape: [B, H, M + 1, D],
      }),
    ) as AttnGraphError;
    expect(AttnGraphError.isInstance(e)).toBe(true);
    expect([e.code, e.subject]).toEqual(["input", "k.cache.inputs[0]"]);
    expect(
      own
        .download(untouched)
        .toFloat32Array()
        .every((v) => v === SENTINEL),
    ).toBe(true); // a plain upload is restored
    own.dispose();
  });

  it("bad calls are typed errors naming <node>.<field>", () => {
    const cache = ex.upload(sentinelCache());
    const cases: [unknown[], unknown, string, string][] = [
      [[B, H, 2, D], 5, "attr", "past"], // past + L = 7 > M = 6
      [[B, H, 1, D], 1.5, "attr", "past"],
      [[B, H, 1, D], "P", "attr", "past"], // an unbound dim name
      [[B, H, 1, D], -1, "attr", "past"],
      [[B, H + 1, 1, D], 0, "shape", "x"],
      [[B, H, 1, D + 1], 0, "shape", "x"],
      [[B, 1, D], 0, "shape", "x"],
    ];
    for (const [shape, past, code, field] of cases) {
      const vx = ex.upload(random(shape as number[], 7));
      const e = thrown(() => append(cache, vx, past, "dec.k")) as AttnGraphError;
      expect(AttnGraphError.isInstance(e), `${String(shape)} past ${String(past)}: ${String(e)}`).toBe(true);
      expect([e.code, e.subject]).toEqual([code, `dec.k.${field}`]);
      if (code === "shape") expect(e).toBeInstanceOf(ShapeError);
      ex.release(vx);
    }
    // A broadcast cache (stride 0 over heads) would lose writes; x a view of the cache itself would be overwritten.
    const wide = ex.upload(sentinelCache([B, 1, M, D]));
    const bcast = new WasmValue(wide.block, [B, H, M, D], [M * D, 0, D, 1]); // borrows wide's reference
    const vx = ex.upload(random([B, H, 1, D], 8));
    expect((thrown(() => append(bcast, vx, 0, "dec.k")) as AttnGraphError).subject).toBe("dec.k.cache");
    const self = ex.dispatch({
      kind: "slice",
      node: "s",
      attrs: { axis: 2, start: 0, size: 1 },
      inputs: [cache],
      outShape: [B, H, 1, D],
    });
    expect((thrown(() => append(cache, self, 1, "dec.k")) as AttnGraphError).subject).toBe("dec.k.x");
    expect(values(cache).every((v) => v === SENTINEL)).toBe(true); // nothing was written by a refused call
    for (const v of [vx, self, wide, cache]) ex.release(v);
  });
});
