// rope's `inverse` on wasm against a float64 rotation written here: inverse rotates by −θ (sin flips sign), so it undoes
// the forward rotation and is its transpose (⟨rope(x), y⟩ = ⟨x, rope⁻¹(y)⟩); rotaryDim < D leaves the other dims alone;
// strided x; absent `inverse` is the forward rotation; a non-boolean is an attribute error.
import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { f64, onWasm, onWasmViews, random, thrown, wasmExecutor, worst } from "../test-util.js";

const ex = await wasmExecutor();

/** Split-half RoPE of x [B, H, L, D] by θ = (offset + l) · base^(−2i/r), or by −θ when `inverse`, in float64. */
function rope64(x: Tensor, base: number, rotaryDim: number | null, offset: number, inverse: boolean): Float64Array {
  const [nb, nh, nl, nd] = x.shape as [number, number, number, number];
  const r = rotaryDim ?? nd;
  const half = r / 2;
  const v = f64(x);
  const out = Float64Array.from(v);
  for (let b = 0; b < nb; b++)
    for (let h = 0; h < nh; h++)
      for (let l = 0; l < nl; l++) {
        const o = ((b * nh + h) * nl + l) * nd;
        for (let i = 0; i < half; i++) {
          const theta = (offset + l) * base ** ((-2 * i) / r);
          const s = inverse ? -Math.sin(theta) : Math.sin(theta);
          const x1 = v[o + i]!;
          const x2 = v[o + i + half]!;
          out[o + i] = x1 * Math.cos(theta) - x2 * s;
          out[o + i + half] = x2 * Math.cos(theta) + x1 * s;
        }
      }
  return out;
}

const attrs = (a: Record<string, unknown> = {}) => ({
  base: 10000,
  rotaryDim: null,
  positionOffset: 0,
  inverse: false,
  ...a,
});
const close = (got: Tensor, want: Float64Array) =>
  expect(worst(got, new Tensor(Float32Array.from(want), got.shape), 1e-6, 1e-5)).toBeLessThan(1);

describe("rope inverse on wasm", () => {
  it("inverse rotates by −θ (with rotaryDim < D and a position offset), and absent inverse is the forward rotation", () => {
    const x = random([2, 3, 7, 8], 1);
    for (const a of [{}, { rotaryDim: 4 }, { positionOffset: 5, base: 500 }] as Record<string, unknown>[]) {
      const p = attrs(a);
      for (const inverse of [false, true])
        close(
          onWasm(ex, "rope", { ...p, inverse }, [x], x.shape),
          rope64(x, p.base as number, p.rotaryDim as number | null, p.positionOffset as number, inverse),
        );
    }
    const { inverse: _, ...noInverse } = attrs();
    void _;
    expect(Array.from(onWasm(ex, "rope", noInverse, [x], x.shape).toFloat32Array())).toEqual(
      Array.from(onWasm(ex, "rope", attrs(), [x], x.shape).toFloat32Array()),
    );
  });

  it("inverse undoes the forward rotation and is its transpose: ⟨rope(x), y⟩ = ⟨x, rope⁻¹(y)⟩", () => {
    const x = random([1, 2, 9, 6], 2);
    const y = random([1, 2, 9, 6], 3);
    const fwd = onWasm(ex, "rope", attrs({ positionOffset: 3 }), [x], x.shape);
    const back = onWasm(ex, "rope", attrs({ positionOffset: 3, inverse: true }), [fwd], x.shape);
    expect(worst(back, x, 1e-6, 1e-5)).toBeLessThan(1);
    const inv = onWasm(ex, "rope", attrs({ positionOffset: 3, inverse: true }), [y], y.shape);
    const dot = (a: Tensor, b: Tensor) => f64(a).reduce((s, v, i) => s + v * f64(b)[i]!, 0);
    expect(Math.abs(dot(fwd, y) - dot(x, inv))).toBeLessThan(1e-5);
  });

  it("strided x (heads split from [B, L, H, D])", () => {
    const x = random([2, 5, 3, 8], 4).permute([0, 2, 1, 3]);
    close(onWasmViews(ex, "rope", attrs({ inverse: true, rotaryDim: 6 }), [x], x.shape), rope64(x, 10000, 6, 0, true));
  });

  it("a non-boolean inverse is an attribute error naming <node>.inverse", () => {
    const e = thrown(() =>
      onWasm(ex, "rope", attrs({ inverse: 1 }), [random([1, 1, 2, 4], 5)], [1, 1, 2, 4], "q.rope.grad"),
    ) as AttnGraphError;
    expect(AttnGraphError.isInstance(e)).toBe(true);
    expect([e.code, e.subject]).toEqual(["attr", "q.rope.grad.inverse"]);
  });
});
