// The fused attention's decode path (assembly/attention.ts `attentionDecode`: at most DECODE_ROWS query rows, K and V
// read in place) against the CPU executor: K and V as views of a KV cache [B, Hkv, M, D] whose head stride M·D is
// larger than S·D (what kv-append returns), GQA, windows with bottom-right alignment, key padding, fully masked rows,
// NaN and ±∞ in the values of keys weighed 0, NaN scores; and the chunked path (one module call per kv head) bit for
// bit the unchunked one.
import { describe, expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import { onCpu, onWasm, onWasmViews, random, wasmExecutor, worst } from "../test-util.js";
import { DECODE_ROWS } from "./attention.js";

const ex = await wasmExecutor();

/** Positions [0, S) of a cache [B, Hkv, M, D] filled from `seed`, as the view kv-append returns (the cache's strides). */
function cacheView(B: number, Hkv: number, M: number, S: number, D: number, seed: number, scale = 1): Tensor {
  const cache = random([B, Hkv, M, D], seed, scale);
  return new Tensor(cache.toFloat32Array(), [B, Hkv, S, D], [Hkv * M * D, M * D, D, 1]);
}

/** The fused attention on wasm (inputs with their own layouts) against the CPU executor's: the worst error. */
function worstVsCpu(attrs: Record<string, unknown>, inputs: readonly (Tensor | undefined)[], shape: number[]): number {
  const got = onWasmViews(ex, "attention", attrs, inputs, shape);
  return worst(got, onCpu("attention", attrs, inputs, shape), 1e-5, 1e-4);
}

const attrsOf = (o: { causal?: boolean; window?: number | null; alignment?: string; scale?: number }) => ({
  causal: o.causal ?? true,
  window: o.window ?? null,
  alignment: o.alignment ?? "bottom-right",
  scale: o.scale ?? 0.3,
  dropoutRate: 0.1, // ignored: not training
  dropoutSeed: 3,
  training: false,
});

describe("fused attention, decode path (few query rows, K and V in place)", () => {
  const B = 2;
  const cases = [
    { label: "MHA, D=64", H: 4, Hkv: 4, S: 129, M: 160, D: 64, Dv: 64, window: null },
    { label: "GQA 6/2, D=18 Dv=36 (vector and scalar tails)", H: 6, Hkv: 2, S: 77, M: 90, D: 18, Dv: 36, window: null },
    { label: "MQA, window 9", H: 3, Hkv: 1, S: 50, M: 64, D: 8, Dv: 8, window: 9 },
    { label: "one key", H: 2, Hkv: 1, S: 1, M: 4, D: 5, Dv: 3, window: null },
    { label: "window 1 (each query sees itself only)", H: 2, Hkv: 2, S: 13, M: 20, D: 4, Dv: 7, window: 1 },
  ] as const;
  for (const c of cases) {
    for (const L of [1, 2, 3, 4, 7, DECODE_ROWS]) {
      for (const padded of [false, true]) {
        it(`${c.label}, L=${L}, S=${c.S} in a cache of ${c.M}${padded ? ", key padding" : ""}`, () => {
          const q = random([B, c.H, L, c.D], 41 + L);
          const k = cacheView(B, c.Hkv, c.M, c.S, c.D, 42, 2);
          const v = cacheView(B, c.Hkv, c.M, c.S, c.Dv, 43);
          const pad = padded
            ? new Tensor(
                random([B, c.S], 44).data.map((x) => (x > 0.4 ? 1 : 0)),
                [B, c.S],
              )
            : undefined;
          const attrs = attrsOf({ window: c.window });
          const shape = [B, c.H, L, c.Dv];
          expect(worstVsCpu(attrs, [q, k, v, pad], shape)).toBeLessThan(1);
        });
      }
    }
  }

  it("no mask, and top-left causal with rows that see no key (L > S)", () => {
    const q = random([1, 2, 4, 8], 51);
    const k = cacheView(1, 2, 9, 3, 8, 52);
    const v = cacheView(1, 2, 9, 3, 8, 53);
    for (const attrs of [
      attrsOf({ causal: false }),
      attrsOf({ alignment: "top-left" }),
      attrsOf({ alignment: "bottom-right" }),
      attrsOf({ window: 2, alignment: "top-left" }),
    ]) {
      expect(worstVsCpu(attrs, [q, k, v, undefined], [1, 2, 4, 8])).toBeLessThan(1);
    }
    // Bottom-right with L = 4 > S = 3: offset S − L = −1, so row 0 sees no key and is zeros.
    const br = onWasmViews(ex, "attention", attrsOf({}), [q, k, v, undefined], [1, 2, 4, 8]).toFloat32Array();
    expect(Array.from(br.slice(0, 8))).toEqual(new Array(8).fill(0));
  });

  it("a fully masked row gives zeros; a NaN or ±∞ in the value row of a key weighed 0 changes nothing", () => {
    const [H, S, M, D] = [2, 12, 16, 8];
    const q = random([2, H, 1, D], 61);
    const k = cacheView(2, H, M, S, D, 62);
    const vData = random([2, H, M, D], 63).toFloat32Array();
    // Batch 0: keys 2 (padded) and 3 (hidden by the window) hold NaN and +∞; batch 1: every key padded.
    for (let h = 0; h < H; h++) {
      vData[(h * M + 2) * D + 1] = NaN;
      vData[(h * M + 3) * D + 5] = Infinity;
      vData[(h * M + 4) * D] = -Infinity;
    }
    const v = new Tensor(vData, [2, H, S, D], [H * M * D, M * D, D, 1]);
    const pad = new Tensor(
      Float32Array.from({ length: 2 * S }, (_, i) => (i === 2 || i >= S ? 1 : 0)),
      [2, S],
    );
    const attrs = attrsOf({ window: S - 4 }); // the one query (position S − 1) sees keys 4.. S − 1 less padded ones
    const windowed = { ...attrs, window: S - 5 }; // … keys 5.. S − 1: key 4's −∞ is hidden too
    const got = onWasmViews(ex, "attention", windowed, [q, k, v, pad], [2, H, 1, D]);
    const want = onCpu("attention", windowed, [q, k, v, pad], [2, H, 1, D]);
    expect(worst(got, want, 1e-5, 1e-4)).toBeLessThan(1);
    const y = got.toFloat32Array();
    expect(y.slice(0, H * D).every(Number.isFinite)).toBe(true);
    expect(Array.from(y.slice(H * D))).toEqual(new Array(H * D).fill(0)); // batch 1: every key padded
    // A visible key's −∞ value does reach its row (key 4 with window S − 4), as the CPU executor has it.
    const seen = onWasmViews(ex, "attention", attrs, [q, k, v, pad], [2, H, 1, D]);
    expect(worstVsCpu(attrs, [q, k, v, pad], [2, H, 1, D])).toBeLessThan(1);
    expect(seen.toFloat32Array()[0]).toBe(-Infinity);
  });

  it("a NaN score makes its row NaN; other rows are unaffected", () => {
    const q = random([1, 2, 2, 8], 71);
    const data = q.toFloat32Array();
    data[(1 * 2 + 1) * 8 + 3] = NaN; // head 1, row 1
    const k = cacheView(1, 1, 40, 33, 8, 72);
    const v = cacheView(1, 1, 40, 33, 8, 73);
    const got = onWasmViews(
      ex,
      "attention",
      attrsOf({}),
      [new Tensor(data, q.shape), k, v, undefined],
      [1, 2, 2, 8],
    ).toFloat32Array();
    expect(got.slice(3 * 8, 4 * 8).every(Number.isNaN)).toBe(true);
    expect(got.filter(Number.isNaN).length).toBe(8);
  });

  it("K and V strided along D take the packing path (same numbers as the CPU executor)", () => {
    const q = random([1, 2, 1, 8], 81);
    const k = random([1, 2, 8, 20], 82).permute([0, 1, 3, 2]); // [1, 2, 20, 8], stride 20 along D
    const v = cacheView(1, 2, 24, 20, 8, 83);
    expect(worstVsCpu(attrsOf({}), [q, k, v, undefined], [1, 2, 1, 8])).toBeLessThan(1);
  });

  it("training dropout keeps the packing path (drops what the CPU executor drops)", () => {
    const q = random([1, 2, 1, 8], 91);
    const k = cacheView(1, 2, 80, 70, 8, 92);
    const v = cacheView(1, 2, 80, 70, 8, 93);
    const attrs = { ...attrsOf({}), dropoutRate: 0.3, training: true };
    expect(worstVsCpu(attrs, [q, k, v, undefined], [1, 2, 1, 8])).toBeLessThan(1);
  });

  it("in chunks (one module call per kv head), bit for bit the unchunked call", async () => {
    const [Bc, H, Hkv, L, S, D] = [2, 6, 3, 2, 70, 16];
    const q = random([Bc, H, L, D], 101);
    const k = random([Bc, Hkv, S, D], 102);
    const v = random([Bc, Hkv, S, D], 103);
    const attrs = attrsOf({ window: 30 });
    const plain = onWasm(ex, "attention", attrs, [q, k, v, undefined], [Bc, H, L, D]);
    // One kv head's work (2 query heads × 2 rows × 70 keys × (16 + 16 + 60)) fits a chunk; the whole call does not.
    const chunked = await wasmExecutor({ chunkWork: 2 * L * S * (2 * D + 60) });
    const inputs = [q, k, v].map((t) => chunked.upload(t));
    const out = await chunked.dispatch({
      kind: "attention",
      node: "context",
      attrs,
      inputs: [...inputs, undefined],
      outShape: [Bc, H, L, D],
      signal: new AbortController().signal,
    });
    const got = chunked.download(out).contiguous();
    chunked.release(out);
    for (const x of inputs) chunked.release(x);
    expect(Array.from(new Uint32Array(got.toFloat32Array().buffer))).toEqual(
      Array.from(new Uint32Array(plain.toFloat32Array().buffer)),
    );
    expect(chunked.inUseBytes).toBe(0);
  });
});
