// mask on wasm with its user inputs, against the mask op written here in float64: a user 0/1 mask of each rank
// ([L, S], [B, L, S], [B, H, L, S]) and with broadcast dims, an additive bias (−∞ entries included) after the scale,
// composed by "or" with causal, a window, bottom-right alignment and key padding; strided scores, mask and bias;
// in place; and the errors (values other than 0/1 name the element, nothing is written; wrong shapes, dtypes, scale).
import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { f64, onWasm, onWasmViews, random, thrown, wasmExecutor, worst } from "../test-util.js";

const ex = await wasmExecutor();

type Attrs = {
  causal: boolean;
  window: number | null;
  alignment: "top-left" | "bottom-right";
  scale: number;
};
const attrs = (a: Partial<Attrs> = {}): Attrs => ({
  causal: false,
  window: null,
  alignment: "top-left",
  scale: 1,
  ...a,
});

/** Element (b, h, i, j) of a user mask or bias of rank 2, 3 or 4 (dims of 1 broadcast), from its row-major values. */
function userAt(m: Tensor, b: number, h: number, i: number, j: number): number {
  const full =
    m.rank === 2 ? [1, 1, ...m.shape] : m.rank === 3 ? [m.shape[0]!, 1, m.shape[1]!, m.shape[2]!] : [...m.shape];
  const idx = [b, h, i, j].map((x, k) => (full[k] === 1 ? 0 : x));
  return f64(m)[((idx[0]! * full[1]! + idx[1]!) * full[2]! + idx[2]!) * full[3]! + idx[3]!]!;
}

/** The mask op in float64: hidden → −∞ (an already −∞ score stays −∞), visible → scale · score + bias. */
function mask64(scores: Tensor, a: Attrs, pad?: Tensor, user?: Tensor, bias?: Tensor): Float32Array {
  const [B, H, L, S] = scores.shape as [number, number, number, number];
  const s = f64(scores);
  const p = pad && f64(pad);
  const off = a.alignment === "bottom-right" ? S - L : 0;
  const out = new Float32Array(s.length);
  for (let b = 0; b < B; b++)
    for (let h = 0; h < H; h++)
      for (let i = 0; i < L; i++)
        for (let j = 0; j < S; j++) {
          const o = ((b * H + h) * L + i) * S + j;
          const q = i + off;
          const hidden =
            (a.causal && j > q) ||
            (a.window !== null && j <= q - a.window) ||
            (p !== undefined && p[b * S + j] === 1) ||
            (user !== undefined && userAt(user, b, h, i, j) === 0);
          out[o] = hidden || s[o] === -Infinity ? -Infinity : a.scale * s[o]! + (bias ? userAt(bias, b, h, i, j) : 0);
        }
  return out;
}

const B = 2,
  H = 3,
  L = 5,
  S = 7;
const binary = (shape: number[], seed: number) =>
  new Tensor(
    random(shape, seed).data.map((v) => (v > -0.4 ? 1 : 0)),
    shape,
  );

describe("mask on wasm: user mask, bias, scale", () => {
  const shapes: [string, number[]][] = [
    ["[L, S]", [L, S]],
    ["[B, L, S]", [B, L, S]],
    ["[B, H, L, S]", [B, H, L, S]],
    ["[1, L, S] (batch broadcast)", [1, L, S]],
    ["[B, 1, L, S] (head broadcast)", [B, 1, L, S]],
    ["[L, 1] (whole query rows)", [L, 1]],
    ["[1, 1, 1, S] (per key)", [1, 1, 1, S]],
  ];
  for (const [label, shape] of shapes) {
    it(`a user mask ${label}: hidden exactly −∞, visible unchanged; composed with causal`, () => {
      const scores = random([B, H, L, S], shape.length, 3);
      const user = binary(
        shape,
        shape.reduce((p, d) => p * 7 + d, 1),
      );
      for (const a of [
        attrs(),
        attrs({ causal: true }),
        attrs({ causal: true, window: 2, alignment: "bottom-right" }),
      ]) {
        const got = onWasm(ex, "mask", a, [scores, undefined, user, undefined], scores.shape).toFloat32Array();
        expect(Array.from(got), JSON.stringify(a)).toEqual(Array.from(mask64(scores, a, undefined, user)));
      }
    });

    it(`a bias ${label} with −∞ entries, after a scale, with key padding and causal`, () => {
      const scores = random([B, H, L, S], 40 + shape.length);
      const bias = new Tensor(
        random(shape, 41).data.map((v) => (v > 0.7 ? -Infinity : 2 * v)),
        shape,
      );
      const pad = new Tensor(
        Float32Array.from({ length: B * S }, (_, k) => (k % 5 === 2 ? 1 : 0)),
        [B, S],
      );
      const user = binary([B, L, S], 42);
      const a = attrs({ causal: true, scale: 0.125 });
      const got = onWasm(ex, "mask", a, [scores, pad, user, bias], scores.shape);
      const want = new Tensor(mask64(scores, a, pad, user, bias), scores.shape);
      expect(worst(got, want, 0, 1e-7)).toBeLessThan(1);
      expect(Array.from(got.toFloat32Array()).map((v) => v === -Infinity)).toEqual(
        Array.from(want.toFloat32Array()).map((v) => v === -Infinity),
      );
    });
  }

  it("a window starting past the last key (L > S) hides the whole row and writes nothing past it", () => {
    // L = 5, S = 2, window 1: query i sees only key i, so rows 2..4 see nothing. Each row is written into a planned
    // output followed by a guard of other values, which must stay as it was (the rows once overran into it).
    for (const user of [undefined, Tensor.from([1, 1, 1, 1, 1, 1, 1, 1, 1, 1], [5, 2])]) {
      const scores = random([1, 2, 5, 2], 90);
      const arena = ex.createArena(20 + 8);
      const guard = arena.view(20, [8]);
      arena.copy(ex.upload(Tensor.from(new Array<number>(8).fill(7), [8])), guard);
      const out = arena.view(0, [1, 2, 5, 2]);
      const s = ex.upload(scores);
      const got = ex.dispatch({
        kind: "mask",
        node: "m",
        attrs: attrs({ causal: true, window: 1 }),
        inputs: [s, undefined, user && ex.upload(user)],
        outShape: [1, 2, 5, 2],
        out,
      });
      const a = attrs({ causal: true, window: 1 });
      expect(Array.from(ex.download(got).toFloat32Array())).toEqual(Array.from(mask64(scores, a, undefined, user)));
      expect(Array.from(ex.download(arena.view(20, [8])).toFloat32Array()), "the guard after the output").toEqual(
        new Array<number>(8).fill(7),
      );
      arena.dispose();
    }
  });

  it("without mask, bias or scale ≠ 1, visible scores keep their bits (−0 and NaN included)", () => {
    const scores = new Tensor(Float32Array.from([-0, NaN, 1.5, -Infinity, 3, 2]), [1, 1, 2, 3]);
    const got = onWasm(ex, "mask", attrs({ causal: true }), [scores], scores.shape).toFloat32Array();
    expect(Object.is(got[0], -0)).toBe(true);
    expect(Array.from(got)).toEqual([-0, -Infinity, -Infinity, -Infinity, 3, -Infinity]);
  });

  it("a score already −∞ stays −∞ whatever the bias (+∞ included) or scale; NaN scores stay NaN where visible", () => {
    const scores = Tensor.from([-Infinity, -Infinity, NaN, 1], [1, 1, 1, 4]);
    const bias = Tensor.from([Infinity, 5, 0, -Infinity], [1, 4]);
    const got = onWasm(
      ex,
      "mask",
      attrs({ scale: 0 }),
      [scores, undefined, undefined, bias],
      scores.shape,
    ).toFloat32Array();
    expect(Array.from(got)).toEqual([-Infinity, -Infinity, NaN, -Infinity]);
  });

  it("strided scores, mask and bias (permuted views), and the unchanged scale-1 path with a bias only", () => {
    const scores = random([B, L, H, S], 50).permute([0, 2, 1, 3]);
    const user = binary([S, L], 51).transpose(0, 1); // [L, S] strided
    const bias = random([B, S, L], 52).permute([0, 2, 1]); // [B, L, S] strided
    for (const a of [attrs({ causal: true, scale: 0.5 }), attrs()]) {
      const got = onWasmViews(ex, "mask", a, [scores, undefined, user, bias], [B, H, L, S]);
      expect(worst(got, new Tensor(mask64(scores, a, undefined, user, bias), [B, H, L, S]), 0, 1e-7)).toBeLessThan(1);
    }
  });

  it("runs in place (out = the scores' own memory) with a user mask and a bias", () => {
    const scores = random([B, H, L, S], 60);
    const user = binary([L, S], 61);
    const bias = random([L, S], 62);
    const a = attrs({ causal: true, scale: 2 });
    const s = ex.upload(scores);
    const out = ex.dispatch({
      kind: "mask",
      node: "masked",
      attrs: { ...a },
      inputs: [s, undefined, ex.upload(user), ex.upload(bias)],
      outShape: scores.shape,
      out: s,
    });
    expect(out).toBe(s);
    expect(
      worst(ex.download(out), new Tensor(mask64(scores, a, undefined, user, bias), scores.shape), 0, 1e-7),
    ).toBeLessThan(1);
  });

  for (const [label, value] of [
    ["2", 2],
    ["NaN", NaN],
    ["-1", -1],
    ["0.5", 0.5],
    ["-0 is 0: fine", -0],
  ] as const) {
    it(`a user mask value of ${label}`, () => {
      const scores = ex.upload(random([1, 2, 2, 3], 70));
      const user = ex.upload(Tensor.from([1, 1, 0, 1, value, 1], [2, 3]));
      const out = ex.upload(Tensor.from(new Array<number>(12).fill(42), [1, 2, 2, 3]));
      const e = thrown(() =>
        ex.dispatch({
          kind: "mask",
          node: "blocks.0.attn.mask",
          attrs: attrs(),
          inputs: [scores, undefined, user, undefined],
          outShape: [1, 2, 2, 3],
          out,
        }),
      );
      if (Object.is(value, -0)) {
        expect(e).toBeUndefined();
        return;
      }
      expect(AttnGraphError.isInstance(e)).toBe(true);
      expect((e as AttnGraphError).code).toBe("input");
      expect((e as Error).message).toBe(
        `blocks.0.attn.mask.mask: user mask values must be 0 or 1, expected 0 (hidden key) or 1 (visible key), got ${value} at [1, 1]`,
      );
      expect(
        ex
          .download(out)
          .toFloat32Array()
          .every((v) => v === 42),
        "nothing written",
      ).toBe(true);
    });
  }

  it("a strided user mask names the element by its own (logical) index", () => {
    const user = new Tensor(Float32Array.from([1, 1, 1, 1, 1, 3]), [3, 2]).transpose(0, 1); // [2, 3]: the 3 is at [1, 2]
    const e = thrown(() =>
      onWasmViews(ex, "mask", attrs(), [random([1, 1, 2, 3], 71), undefined, user, undefined], [1, 1, 2, 3], "m"),
    ) as Error;
    expect(e.message).toMatch(/got 3 at \[1, 2\]$/);
  });

  it("wrong shapes, dtypes and scale are typed errors naming the field", () => {
    const scores = ex.upload(random([B, H, L, S], 80));
    const call = (inputs: unknown[], a: Record<string, unknown> = attrs()) =>
      thrown(() =>
        ex.dispatch({ kind: "mask", node: "m", attrs: a, inputs: inputs as never, outShape: [B, H, L, S] }),
      ) as Error;
    expect(call([scores, undefined, ex.upload(binary([S, L], 1))]).message).toBe(
      `m.mask: mask dim L must match the scores or be 1, expected ${L} or 1, got ${S} in [${S}, ${L}]`,
    );
    expect(call([scores, undefined, undefined, ex.upload(random([B, H, L, S, 1], 2))]).message).toMatch(
      /^m\.bias: a user bias is \[L, S\], \[B, L, S\] or \[B, H, L, S\], expected rank 2, 3 or 4/,
    );
    expect(call([scores, undefined, undefined, ex.upload(random([3, L, S], 3))]).message).toMatch(
      /^m\.bias: bias dim B must match the scores or be 1, expected 2 or 1, got 3/,
    );
    expect(
      call([scores, undefined, ex.upload(Tensor.int32(new Array<number>(L * S).fill(1), [L, S]))]).message,
    ).toMatch(/^m\.mask: .*wrong dtype, expected float32, got int32/);
    for (const scale of [NaN, Infinity, "2"])
      expect(call([scores], { ...attrs(), scale }).message).toMatch(
        /^m\.scale: invalid attribute of op mask, expected a finite number/,
      );
    // an absent scale is 1
    const { scale: _, ...noScale } = attrs();
    expect(call([scores], noScale)).toBeUndefined();
  });
});
