// kv-append on cpu: two appends into one cache tensor (the second call passes the same tensor again, as a decode
// session does) give views of the cache's own array holding the concatenation, positions past past + L untouched; x
// may be any strided view; bad calls are typed errors naming the node and field.
import { Tensor } from "@attngraph/tensor";
import { thrownError as failure } from "@attngraph/testkit/test-helpers";
import { describe, expect, it } from "vitest";
import { createCpuExecutor } from "../register-kernels.js";

const ex = createCpuExecutor();
const [B, H, M, D] = [2, 3, 6, 4];
const SENTINEL = 7.5;
const seq = (n: number, from: number) => Array.from({ length: n }, (_, i) => from + i);
const append = (cache: Tensor, x: Tensor, past: unknown) =>
  ex.dispatch({
    kind: "kv-append",
    node: "k.cache",
    attrs: { past, length: "S" },
    inputs: [cache, x],
    outShape: [B, H, (typeof past === "number" ? past : 0) + x.shape[2]!, D],
  }) as Tensor;

describe("kv-append (cpu)", () => {
  it("appends in place and returns a view of the first past + L positions", () => {
    const cache = new Tensor(new Float32Array(B * H * M * D).fill(SENTINEL), [B, H, M, D]);
    // x as heads split from [B, L, H, D]: a transposed (strided) view.
    const first = Tensor.from(seq(B * 3 * H * D, 100), [B, 3, H, D]).permute([0, 2, 1, 3]);
    const a = append(cache, first, 0);
    expect(a.shape).toEqual([B, H, 3, D]);
    expect(a.data).toBe(cache.data);
    const second = Tensor.from(seq(B * H * 2 * D, 500), [B, H, 2, D]);
    const b = append(cache, second, 3);
    expect(b.shape).toEqual([B, H, 5, D]);
    for (let i = 0; i < B; i++)
      for (let h = 0; h < H; h++) {
        for (let l = 0; l < 3; l++) for (let d = 0; d < D; d++) expect(b.get(i, h, l, d)).toBe(first.get(i, h, l, d));
        for (let l = 0; l < 2; l++)
          for (let d = 0; d < D; d++) expect(b.get(i, h, 3 + l, d)).toBe(second.get(i, h, l, d));
        for (let d = 0; d < D; d++) expect(cache.get(i, h, 5, d)).toBe(SENTINEL);
      }
  });

  it("with shift, positions [shift, shift + past) move to the front first (a window's ring), then x follows them", () => {
    const cache = Tensor.from(seq(B * H * M * D, 0), [B, H, M, D]);
    const before = cache.contiguous();
    const x = Tensor.from(seq(B * H * D, 1000), [B, H, 1, D]);
    const out = ex.dispatch({
      kind: "kv-append",
      node: "k.cache",
      attrs: { past: 2, shift: 3, length: "S" },
      inputs: [cache, x],
      outShape: [B, H, 3, D],
    }) as Tensor;
    expect(out.shape).toEqual([B, H, 3, D]);
    for (let i = 0; i < B; i++)
      for (let h = 0; h < H; h++)
        for (let d = 0; d < D; d++) {
          expect([out.get(i, h, 0, d), out.get(i, h, 1, d), out.get(i, h, 2, d)]).toEqual([
            before.get(i, h, 3, d),
            before.get(i, h, 4, d),
            x.get(i, h, 0, d),
          ]);
        }
    expect(() =>
      ex.dispatch({
        kind: "kv-append",
        node: "k.cache",
        attrs: { past: 2, shift: 5, length: "S" },
        inputs: [cache, x],
        outShape: [B, H, 3, D],
      }),
    ).toThrow(/^k\.cache\.shift: /);
  });

  it("refuses a full cache, another head count and an unbound past, naming the field", () => {
    const cache = Tensor.zeros([B, H, M, D]);
    expect(failure(() => append(cache, Tensor.zeros([B, H, 2, D]), 5)).message).toMatch(/^k\.cache\.past: /);
    expect(failure(() => append(cache, Tensor.zeros([B, 1, 2, D]), 0)).message).toMatch(
      /^k\.cache\.x: dim 1 \(Hkv\) differs from the cache's/,
    );
    expect(failure(() => append(cache, Tensor.zeros([B, H, 2, D]), "P")).message).toMatch(/^k\.cache\.past: /);
  });
});
