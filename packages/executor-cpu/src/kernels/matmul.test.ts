import { describe, expect, it } from "vitest";
import { matmul, packPanels, type MatOperand, type VecOperand } from "./matmul.js";

/** Deterministic values in [-1, 1) from a small LCG, so a wrong index shows up as a wrong number. */
function values(n: number, seed: number): Float32Array {
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = s / 2 ** 31 - 1;
  }
  return out;
}

/** The plain triple loop, float64 accumulation in k order, bias added last: the numbers matmul promises bit for bit. */
function naive(m: number, n: number, k: number, a: MatOperand, b: MatOperand, bias?: VecOperand): Float32Array {
  const c = new Float32Array(m * n);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let acc = 0;
      for (let p = 0; p < k; p++)
        acc +=
          a.data[a.offset + i * a.rowStride + p * a.colStride]! * b.data[b.offset + p * b.rowStride + j * b.colStride]!;
      if (bias !== undefined) acc += bias.data[bias.offset + j * bias.stride]!;
      c[i * n + j] = acc;
    }
  }
  return c;
}

const rowMajor = (data: Float32Array, cols: number, offset = 0): MatOperand => ({
  data,
  offset,
  rowStride: cols,
  colStride: 1,
});

describe("matmul", () => {
  it.each([
    [1, 1, 1],
    [3, 5, 7],
    [33, 70, 5],
    [64, 64, 64],
    [129, 65, 31],
    [4, 4, 0],
  ])("row-major %i×%i×%i (M×N×K) equals the naive loop bit for bit", (m, n, k) => {
    const a = rowMajor(values(m * k, 1), k);
    const b = rowMajor(values(k * n, 2), n);
    const c = new Float32Array(m * n).fill(NaN);
    matmul(m, n, k, a, b, c, 0, n);
    expect(c).toEqual(naive(m, n, k, a, b));
  });

  it("reads a transposed B (x · Wᵀ with W [N, K]) and adds a strided bias", () => {
    const [m, n, k] = [37, 23, 45];
    const a = rowMajor(values(m * k, 3), k);
    const w = values(n * k, 4); // [N, K]
    const b: MatOperand = { data: w, offset: 0, rowStride: 1, colStride: k }; // Wᵀ [K, N]
    const biasData = values(2 * n + 1, 5);
    const bias: VecOperand = { data: biasData, offset: 1, stride: 2 };
    const c = new Float32Array(m * n);
    matmul(m, n, k, a, b, c, 0, n, bias);
    expect(c).toEqual(naive(m, n, k, a, b, bias));
    expect(c[0]).not.toBe(naive(m, n, k, a, b)[0]); // the bias really is in there
  });

  it("reads strided operands: transposed A, every second column, negative strides and offsets", () => {
    const [m, n, k] = [19, 13, 29];
    const aT = values(k * m, 6); // stored [K, M]: A = its transpose
    const a: MatOperand = { data: aT, offset: 0, rowStride: 1, colStride: m };
    const wide = values(k * 2 * n + 3, 7); // B [K, N] with each row's elements two apart, after a 3-element offset
    const b: MatOperand = { data: wide, offset: 3, rowStride: 2 * n, colStride: 2 };
    const c = new Float32Array(m * n);
    matmul(m, n, k, a, b, c, 0, n);
    expect(c).toEqual(naive(m, n, k, a, b));

    // Rows and columns of A walked backwards.
    const back: MatOperand = { data: aT, offset: k * m - 1, rowStride: -1, colStride: -m };
    matmul(m, n, k, back, b, c, 0, n);
    expect(c).toEqual(naive(m, n, k, back, b));
  });

  it("writes only its window of C: offset and row stride, neighbours untouched", () => {
    const [m, n, k] = [6, 5, 9];
    const a = rowMajor(values(m * k, 8), k);
    const b = rowMajor(values(k * n, 9), n);
    const ld = n + 3;
    const c = new Float32Array(2 + m * ld).fill(NaN);
    matmul(m, n, k, a, b, c, 2, ld);
    const want = naive(m, n, k, a, b);
    for (let i = 0; i < c.length; i++) {
      const r = Math.floor((i - 2) / ld);
      const j = (i - 2) % ld;
      if (i >= 2 && j < n) expect(c[i]).toBe(want[r * n + j]);
      else expect(c[i]).toBeNaN();
    }
  });

  it("gives the same answer when called again with smaller sizes (scratch reuse leaves no stale data)", () => {
    const big = rowMajor(values(80 * 80, 10), 80);
    matmul(80, 80, 80, big, big, new Float32Array(80 * 80), 0, 80);
    const a = rowMajor(values(5 * 3, 11), 3);
    const b = rowMajor(values(3 * 6, 12), 6);
    const c = new Float32Array(5 * 6);
    matmul(5, 6, 3, a, b, c, 0, 6);
    expect(c).toEqual(naive(5, 6, 3, a, b));
  });

  it("blocks a wide B in column blocks (K large enough that B does not fit one packed block)", () => {
    const [m, n, k] = [5, 70, 4100]; // 4100 · 70 float64s exceed the packed-B cap, so B goes in several blocks
    const a = rowMajor(values(m * k, 13), k);
    const b = rowMajor(values(k * n, 14), n);
    const c = new Float32Array(m * n);
    matmul(m, n, k, a, b, c, 0, n);
    expect(c).toEqual(naive(m, n, k, a, b));
  });
});

describe("packPanels", () => {
  it("lays lanes out depth-major in panels of 4 and zero-pads the last panel", () => {
    // 5 lanes of depth 2: lane l, step p = 10 · l + p.
    const src = Float32Array.from([0, 1, 10, 11, 20, 21, 30, 31, 40, 41]);
    const dst = new Float64Array(16).fill(NaN);
    packPanels(src, 0, 2, 1, 5, 2, dst, 0);
    expect([...dst]).toEqual([0, 10, 20, 30, 1, 11, 21, 31, 40, 0, 0, 0, 41, 0, 0, 0]);
  });
});
