// Proves the backward references right without trusting their formulas: each one against central finite differences of
// the forward float64 reference it differentiates (softmax64, maskFull64, layerNorm64, gelu64, relu64, embedding64,
// crossEntropy64, rope64), and the linear ones (sum-to, pad, linear-weight-grad, rope inverse) also against the
// adjoint identity ⟨f(x), y⟩ = ⟨x, fᵀ(y)⟩ with their forward op (broadcast, slice, projection, rope).
import { describe, expect, it } from "vitest";
import { add64, crossEntropy64, embedding64, gelu64, layerNorm64, maskFull64, relu64 } from "./block64.js";
import {
  crossEntropyGrad64,
  embeddingGrad64,
  geluGrad64,
  layerNormGrad64,
  layerNormWeightGrad64,
  linearWeightGrad64,
  maskGrad64,
  pad64,
  reluGrad64,
  slice64,
  softmaxGrad64,
  sumTo64,
} from "./backward64.js";
import { linear64, softmax64 } from "./ops64.js";
import { rope64, type Rope64 } from "./rope64.js";
import { expectNear, normals } from "./test-values.js";

const dot = (a: ArrayLike<number>, b: ArrayLike<number>): number => {
  expect(a.length, "dot: lengths").toBe(b.length);
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
};

/** The gradient of the scalar f at x by central differences, step h per element. */
function numericGrad(f: (x: Float64Array) => number, x: Float64Array, h = 1e-5): Float64Array {
  const g = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) {
    const p = Float64Array.from(x);
    const m = Float64Array.from(x);
    p[i]! += h;
    m[i]! -= h;
    g[i] = (f(p) - f(m)) / (2 * h);
  }
  return g;
}

/** ⟨a, b⟩ = ⟨c, d⟩ to 1e-12 relative to the terms' magnitude. */
function expectAdjoint(lhs: number, rhs: number, label: string): void {
  expect(Math.abs(lhs - rhs), `${label}: ⟨f(x), y⟩ = ${lhs}, ⟨x, fᵀ(y)⟩ = ${rhs}`).toBeLessThan(
    1e-12 * (1 + Math.abs(lhs)),
  );
}

const FD = 1e-7; // finite differences in float64 with h = 1e-5: truncation ~h², rounding ~1e-16/h

describe("sumTo64", () => {
  it("sums leading axes and axes of 1, by hand", () => {
    const x = Float64Array.from({ length: 12 }, (_, i) => i); // [2, 2, 3]
    expect([...sumTo64(x, [2, 2, 3], [3])]).toEqual([18, 22, 26]);
    expect([...sumTo64(x, [2, 2, 3], [2, 1, 3])]).toEqual([3, 5, 7, 15, 17, 19]);
    expect([...sumTo64(x, [2, 2, 3], [2, 1])]).toEqual([24, 42]); // x[a, b, c] = 6a + 3b + c summed over a and c
    expect([...sumTo64(x, [2, 2, 3], [])]).toEqual([66]);
    expect([...sumTo64(x, [2, 2, 3], [2, 2, 3])]).toEqual([...x]);
  });

  const cases: [number[], number[]][] = [
    [[2, 3, 4], [4]],
    [
      [2, 3, 4],
      [1, 3, 4],
    ],
    [
      [2, 3, 4],
      [2, 1, 4],
    ],
    [
      [2, 3, 4],
      [3, 1],
    ],
    [
      [2, 3, 4],
      [1, 1, 1],
    ],
    [[2, 3, 4], []],
    [
      [2, 2, 3, 4, 5],
      [2, 2, 1, 4, 5],
    ],
    [
      [2, 3, 4],
      [2, 3, 4],
    ],
  ];
  for (const [xs, os] of cases) {
    it(`is the adjoint of broadcasting [${os}] to [${xs}]`, () => {
      const n = xs.reduce((p, d) => p * d, 1);
      const x = normals(1, n);
      const y = normals(
        2,
        os.reduce((p, d) => p * d, 1),
      );
      const broadcast = add64(new Float64Array(n), xs, y, os); // y broadcast to x's shape
      expect(broadcast.shape).toEqual(xs);
      expectAdjoint(dot(broadcast.data, x), dot(y, sumTo64(x, xs, os)), `sum-to [${xs}] → [${os}]`);
    });
  }
});

describe("pad64", () => {
  it("puts zeros before and after along the axis, by hand; a negative axis counts from the end", () => {
    const x = Float64Array.of(1, 2, 3, 4); // [2, 2]
    expect(pad64(x, [2, 2], -1, 1, 2)).toEqual({ shape: [2, 5], data: Float64Array.of(0, 1, 2, 0, 0, 0, 3, 4, 0, 0) });
    expect(pad64(x, [2, 2], 0, 0, 1)).toEqual({ shape: [3, 2], data: Float64Array.of(1, 2, 3, 4, 0, 0) });
    expect(slice64(Float64Array.of(0, 1, 2, 0, 0, 0, 3, 4, 0, 0), [2, 5], -1, 1, 2).data).toEqual(x);
  });

  for (const [shape, axis, before, after] of [
    [[2, 3, 4], -1, 4, 4],
    [[2, 3, 4], 1, 0, 2],
    [[2, 3, 4], -3, 1, 0],
    [[3, 4], 0, 0, 0],
  ] as [number[], number, number, number][]) {
    it(`is the adjoint of slice: [${shape}] axis ${axis}, ${before} before, ${after} after`, () => {
      const x = normals(
        3,
        shape.reduce((p, d) => p * d, 1),
      );
      const padded = pad64(x, shape, axis, before, after);
      const y = normals(4, padded.data.length);
      const a = axis < 0 ? axis + shape.length : axis;
      expectAdjoint(
        dot(padded.data, y),
        dot(x, slice64(y, padded.shape, axis, before, shape[a]!).data),
        `pad axis ${axis}`,
      );
    });
  }
});

describe("linearWeightGrad64", () => {
  it("is the adjoint of the projection in its weight: ⟨x · Wᵀ, g⟩ = ⟨W, linearWeightGrad(g, x)⟩", () => {
    const [rows, inF, outF] = [7, 5, 3];
    const x = normals(5, rows * inF);
    const w = normals(6, outF * inF);
    const g = normals(7, rows * outF);
    expectAdjoint(dot(linear64(x, inF, w, outF), g), dot(w, linearWeightGrad64(g, outF, x, inF)), "linear-weight-grad");
    // and, being linear in W, its finite differences are the gradient too
    expectNear(
      linearWeightGrad64(g, outF, x, inF),
      numericGrad((wp) => dot(linear64(x, inF, wp, outF), g), w),
      FD,
      "linear-weight-grad vs finite differences",
    );
  });
});

describe("softmaxGrad64", () => {
  for (const scale of [1, 0.35]) {
    it(`is the finite-difference gradient of ⟨softmax64(x), g⟩ (scale ${scale})`, () => {
      const S = 5;
      const x = normals(8, 3 * S, 2);
      const g = normals(9, 3 * S);
      const y = softmax64(x, S, scale);
      expectNear(
        softmaxGrad64(y, g, S, scale),
        numericGrad((xp) => dot(softmax64(xp, S, scale), g), x),
        FD,
        `softmax-grad scale ${scale}`,
      );
    });
  }

  it("with −∞ entries: masked entries and a fully masked row get exactly 0", () => {
    const m = -Infinity;
    const x = Float64Array.of(m, m, m, m, 0.5, m, 2, -1);
    const g = normals(10, 8, 3);
    const y = softmax64(x, 4, 0.7);
    const dx = softmaxGrad64(y, g, 4, 0.7);
    expect([...dx.subarray(0, 4)]).toEqual([0, 0, 0, 0]);
    expect(dx[5]).toBe(0);
    // finite differences over the visible entries only (a −∞ perturbed stays −∞)
    const visible = [4, 6, 7];
    const fd = numericGrad(
      (v) => {
        const xp = Float64Array.from(x);
        visible.forEach((k, i) => (xp[k] = v[i]!));
        return dot(softmax64(xp, 4, 0.7).subarray(4), g.subarray(4));
      },
      Float64Array.from(visible, (k) => x[k]!),
    );
    expectNear(
      visible.map((k) => dx[k]!),
      fd,
      FD,
      "softmax-grad of a partly masked row",
    );
  });

  it("a NaN in grad makes its row NaN and no other", () => {
    const y = softmax64(Float64Array.of(0, 1, 2, 3), 2, 1);
    const dx = softmaxGrad64(y, Float64Array.of(NaN, 1, 1, 2), 2, 1);
    expect(Number.isNaN(dx[0]!) && Number.isNaN(dx[1]!)).toBe(true);
    expect(dx.subarray(2).every(Number.isFinite)).toBe(true);
  });
});

describe("maskGrad64", () => {
  it("is the finite-difference gradient of the visible part of maskFull64 (scale, causal, a −∞ bias)", () => {
    const [B, H, L, S] = [1, 2, 3, 4];
    const scores = normals(11, B * H * L * S);
    const bias = {
      shape: [L, S],
      data: Float64Array.from(normals(12, L * S), (v, i) => (i === 1 || i === 6 ? -Infinity : v)),
    };
    const m = { causal: true, window: null, alignment: "top-left" as const, scale: 0.5 };
    const masked = maskFull64(scores, B, H, L, S, m, undefined, undefined, bias);
    expect(masked.some((v) => v === -Infinity)).toBe(true);
    const g = normals(13, masked.length);
    const visibleDot = (s: Float64Array): number =>
      maskFull64(s, B, H, L, S, m, undefined, undefined, bias).reduce(
        (a, v, k) => (v === -Infinity ? a : a + v * g[k]!),
        0,
      );
    const dx = maskGrad64(g, masked, 0.5);
    expectNear(dx, numericGrad(visibleDot, scores), FD, "mask-grad");
    masked.forEach((v, k) => v === -Infinity && expect(dx[k], `hidden entry ${k}`).toBe(0));
  });

  it("only −∞ hides: +∞ and NaN in the forward output pass scale · grad", () => {
    expect([...maskGrad64(Float64Array.of(1, 2, 3, 4), Float64Array.of(-Infinity, Infinity, NaN, 0), 2)]).toEqual([
      0, 4, 6, 8,
    ]);
  });
});

describe("layerNormGrad64 and layerNormWeightGrad64", () => {
  const E = 6;
  const x = normals(14, 3 * E, 2);
  const g = normals(15, 3 * E);
  const w = normals(16, E);
  const b = normals(17, E);
  for (const eps of [1e-5, 1e-2]) {
    it(`dx is the finite-difference gradient of ⟨layerNorm64(x), g⟩, affine and not (eps ${eps})`, () => {
      expectNear(
        layerNormGrad64(g, x, E, eps, w),
        numericGrad((xp) => dot(layerNorm64(xp, E, eps, w, b), g), x),
        FD,
        "layer-norm-grad affine",
      );
      expectNear(
        layerNormGrad64(g, x, E, eps),
        numericGrad((xp) => dot(layerNorm64(xp, E, eps), g), x),
        FD,
        "layer-norm-grad plain",
      );
    });
    it(`dweight is the finite-difference gradient of ⟨layerNorm64(x; w), g⟩ in w (eps ${eps})`, () => {
      expectNear(
        layerNormWeightGrad64(g, x, E, eps),
        numericGrad((wp) => dot(layerNorm64(x, E, eps, wp, b), g), w),
        FD,
        "layer-norm-weight-grad",
      );
    });
  }

  it("a constant row: x̂ = 0, so dx = (ĝ − mean ĝ) / sqrt(eps) and its weight gradient is 0", () => {
    const c = new Float64Array(4).fill(3.25);
    const gc = Float64Array.of(1, 2, 3, 6);
    const dx = layerNormGrad64(gc, c, 4, 1e-4);
    [-2, -1, 0, 3].forEach((v, j) => expect(dx[j]).toBeCloseTo(v * 100, 9));
    expect([...layerNormWeightGrad64(gc, c, 4, 1e-4)]).toEqual([0, 0, 0, 0]);
  });
});

describe("geluGrad64", () => {
  for (const approximate of ["none", "tanh"] as const) {
    it(`is grad times the finite-difference derivative of gelu64 (${approximate}) over -8..8`, () => {
      const x = Float64Array.from({ length: 65 }, (_, i) => -8 + i * 0.25);
      const g = normals(18, x.length);
      expectNear(
        geluGrad64(g, x, approximate),
        numericGrad((xp) => dot(gelu64(xp, approximate), g), x),
        FD,
        `gelu-grad ${approximate}`,
      );
    });
  }

  it("gelu'(0) = ½ in both forms; the limits are 0 and 1", () => {
    for (const a of ["none", "tanh"] as const) {
      const d = geluGrad64(Float64Array.of(1, 1, 1), Float64Array.of(0, -30, 30), a);
      expect(d[0]).toBe(0.5);
      expect(Math.abs(d[1]!)).toBeLessThan(1e-15);
      expect(d[2]).toBeCloseTo(1, 15);
    }
  });
});

describe("reluGrad64", () => {
  it("is grad times the finite-difference derivative of relu64, read from relu's output, away from the kink", () => {
    // Offsets of 0.1 keep every x at least 0.1 from 0, far beyond the finite-difference step.
    const x = Float64Array.from({ length: 40 }, (_, i) => -4.9 + i * 0.25);
    const g = normals(23, x.length);
    expectNear(
      reluGrad64(g, relu64(x)),
      numericGrad((xp) => dot(relu64(xp), g), x),
      FD,
      "relu-grad",
    );
  });

  it("at y = 0 (either sign) the gradient is 0 even for a NaN or infinite grad; a NaN y lets grad through", () => {
    expect([
      ...reluGrad64(Float64Array.of(NaN, Infinity, 2, 3, 4), Float64Array.of(0, -0, NaN, Infinity, 1e-30)),
    ]).toEqual([0, 0, 2, 3, 4]);
  });
});

describe("embeddingGrad64", () => {
  it("is the gradient of ⟨embedding64(ids, table), g⟩ in the table: a scatter-add, repeated ids accumulate", () => {
    const [V, E] = [5, 3];
    const ids = [4, 0, 2, 2, 4, 4];
    const table = normals(19, V * E);
    const g = normals(20, ids.length * E);
    const dt = embeddingGrad64(ids, g, V, E);
    expectNear(
      dt,
      numericGrad((tp) => dot(embedding64(ids, tp, V, E), g), table),
      FD,
      "embedding-grad",
    );
    expectAdjoint(dot(embedding64(ids, table, V, E), g), dot(table, dt), "embedding-grad adjoint");
    expect([...dt.subarray(3, 6), ...dt.subarray(9, 12)], "rows no id names").toEqual([0, 0, 0, 0, 0, 0]);
    expect(dt[12]).toBeCloseTo(g[0]! + g[12]! + g[15]!, 15);
  });

  it("refuses an id out of range", () => {
    expect(() => embeddingGrad64([0, 5], new Float64Array(4), 5, 2)).toThrow(/out of range/);
    expect(() => embeddingGrad64([-1], new Float64Array(2), 5, 2)).toThrow(/out of range/);
  });
});

describe("crossEntropyGrad64", () => {
  const V = 5;
  const logits = normals(21, 6 * V, 2);
  const targets = [0, 4, 2, 1, 3, 3];
  const ignoring = [0, -100, 2, -100, 3, 3];
  for (const reduction of ["mean", "sum", "none"] as const) {
    for (const withGrad of [false, true]) {
      for (const ignoreIndex of [null, -100]) {
        it(`is the finite-difference gradient of crossEntropy64 (${reduction}, grad ${withGrad ? "given" : "absent"}, ignoreIndex ${ignoreIndex})`, () => {
          const t = ignoreIndex === null ? targets : ignoring;
          const grad = withGrad ? normals(22, reduction === "none" ? 6 : 1) : undefined;
          const weight = grad ?? new Float64Array(reduction === "none" ? 6 : 1).fill(1);
          const want = numericGrad((lp) => dot(crossEntropy64(lp, V, t, reduction, ignoreIndex), weight), logits);
          const got = crossEntropyGrad64(logits, V, t, reduction, ignoreIndex, grad);
          expectNear(got, want, FD, `cross-entropy-grad ${reduction}`);
          if (ignoreIndex !== null)
            expect([...got.subarray(V, 2 * V), ...got.subarray(3 * V, 4 * V)], "ignored rows").toEqual(
              new Array(2 * V).fill(0),
            );
        });
      }
    }
  }

  it("an all-ignored mean gives zeros; large logits stay finite; a bad target throws", () => {
    expect([...crossEntropyGrad64(logits.subarray(0, 2 * V), V, [-100, -100], "mean", -100)]).toEqual(
      new Array(2 * V).fill(0),
    );
    const huge = crossEntropyGrad64(Float64Array.of(1000, 0, -1000, 1e4, 1e4 - 1, 0), 3, [0, 1], "sum");
    expect(huge.every(Number.isFinite)).toBe(true);
    expect(huge[3]).toBeCloseTo(1 / (1 + Math.exp(-1)), 14);
    expect(() => crossEntropyGrad64(logits.subarray(0, V), V, [5], "mean")).toThrow(/out of range/);
    expect(() => crossEntropyGrad64(logits.subarray(0, V), V, [-1], "mean", -100)).toThrow(/out of range/);
  });
});

describe("rope64 inverse", () => {
  const cases: [string, number, number, number, Rope64][] = [
    ["whole D", 3, 5, 8, { base: 10000, rotaryDim: null, positionOffset: 0 }],
    ["rotaryDim 4 < D = 7, offset 1000, base 500", 2, 3, 7, { base: 500, rotaryDim: 4, positionOffset: 1000 }],
  ];
  for (const [label, H, L, D, a] of cases) {
    it(`inverse(rope(x)) = x, and the inverse is rope's transpose: its finite-difference gradient (${label})`, () => {
      const n = 2 * H * L * D;
      const x = normals(23, n);
      const g = normals(24, n);
      const inv = { ...a, inverse: true };
      expectNear(rope64(rope64(x, 2, H, L, D, a), 2, H, L, D, inv), x, 1e-14, "inverse(rope(x))");
      expectNear(rope64(rope64(x, 2, H, L, D, inv), 2, H, L, D, a), x, 1e-14, "rope(inverse(x))");
      expectAdjoint(dot(rope64(x, 2, H, L, D, a), g), dot(x, rope64(g, 2, H, L, D, inv)), "rope adjoint");
      expectNear(
        rope64(g, 2, H, L, D, inv),
        numericGrad((xp) => dot(rope64(xp, 2, H, L, D, a), g), x),
        FD,
        "rope-inverse vs finite differences",
      );
      expect(rope64(x, 2, H, L, D, { ...a, inverse: false })).toEqual(rope64(x, 2, H, L, D, a));
    });
  }

  it("rotates by −θ: e_1 at p = 1, r = 4, base 100 turns by −0.1", () => {
    const y = rope64(Float64Array.of(0, 1, 0, 0, 7, 8), 1, 1, 1, 6, {
      base: 100,
      rotaryDim: 4,
      positionOffset: 1,
      inverse: true,
    });
    [0, Math.cos(0.1), 0, -Math.sin(0.1), 7, 8].forEach((v, k) => expect(y[k]).toBeCloseTo(v, 15));
  });
});
