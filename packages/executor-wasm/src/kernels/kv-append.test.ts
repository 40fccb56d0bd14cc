// kv-append on wasm: two appends into one cache value give views of the cache's own block; a strided cache and L = 0;
// the in-place write drops the cache's prepacked matmul layout and stops a trap from restoring the cache's upload-time
// contents; a broadcast cache is refused. What every executor must do (the values, shift, the bad calls every executor
// refuses) is reliability's kv-append test.
import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { KV_SENTINEL, kvAppendCall, kvConcat, sentinelTensor } from "@attngraph/testkit";
import { WasmValue } from "../value.js";
import { random, thrown, uploadView, wasmExecutor, trapKernel } from "../test-util.js";

const ex = await wasmExecutor();
const [B, H, M, D] = [2, 3, 6, 4];
const append = (cache: WasmValue, x: WasmValue, past: unknown, node?: string) =>
  ex.dispatch(kvAppendCall(cache, x, past, node));

const values = (v: WasmValue) => Array.from(ex.download(v).contiguous().toFloat32Array());

describe("kv-append on wasm", () => {
  it("two appends into one cache: views of its block holding the concatenation; later positions untouched", () => {
    const cache = ex.upload(sentinelTensor([B, H, M, D]));
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
    expect(values(y2)).toEqual(kvConcat(x1, x2));
    expect(values(cache)).toEqual(kvConcat(x1, x2, M - 5)); // position 5 was never written
    for (const v of [y2, v2, cache]) ex.release(v);
    expect(cache.block.freed).toBe(true); // the views held references and gave them back
  });

  it("a strided cache (stored [B, H, D, M]) and L = 0", () => {
    const storage = sentinelTensor([B, H, D, M]);
    const cache = uploadView(ex, storage.permute([0, 1, 3, 2]));
    const x = random([B, H, 2, D], 3);
    const vx = ex.upload(x);
    const y = append(cache, vx, 1);
    const want = kvConcat(sentinelTensor([B, H, 1, D]), x, M - 3);
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
    const cache = ex.upload(sentinelTensor([1, 1, M, D]));
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
    const cache = own.upload(sentinelTensor([B, H, M, D]));
    const untouched = own.upload(sentinelTensor([B, H, M, D]));
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
        .every((v) => v === KV_SENTINEL),
    ).toBe(true); // a plain upload is restored
    own.dispose();
  });

  it("a broadcast cache (stride 0 over heads) is refused naming the cache: its writes would overwrite each other", () => {
    const wide = ex.upload(sentinelTensor([B, 1, M, D]));
    const bcast = new WasmValue(wide.block, [B, H, M, D], [M * D, 0, D, 1]); // borrows wide's reference
    const vx = ex.upload(random([B, H, 1, D], 8));
    expect((thrown(() => append(bcast, vx, 0, "dec.k")) as AttnGraphError).subject).toBe("dec.k.cache");
    expect(values(wide).every((v) => v === KV_SENTINEL)).toBe(true); // nothing was written by a refused call
    for (const v of [vx, wide]) ex.release(v);
  });
});
