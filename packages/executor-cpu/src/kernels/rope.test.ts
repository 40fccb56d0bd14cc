import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import type { RopeAttrs } from "@attngraph/graph";
import { thrownSubject as subject } from "@attngraph/testkit/test-helpers";
import { ropeImpl } from "./rope.js";
import { createCpuExecutor } from "../register-kernels.js";

/** Kernels run as the runtime runs them: checkCall holds each call to its op's declaration first. */
const cpu = createCpuExecutor();

function run(x: Tensor, attrs: Partial<RopeAttrs> = {}): Tensor {
  const full = { base: 10000, rotaryDim: null, positionOffset: 0, inverse: false, ...attrs };
  return cpu.dispatch({ kind: "rope", node: "q.rope", attrs: full, inputs: [x], outShape: x.shape });
}

const close = (got: readonly number[], want: readonly number[]) => {
  expect(got.length).toBe(want.length);
  want.forEach((w, k) => expect(got[k], `element ${k}`).toBeCloseTo(w, 6));
};

describe("rope kernel", () => {
  it("leaves position 0 unchanged and rotates a pair by θ = p at frequency 0", () => {
    const x = Tensor.from([0.3, -0.7, 0.3, -0.7], [1, 1, 2, 2]); // positions 0 and 1, D = 2
    const [x1, x2] = [0.3, -0.7];
    close(run(x).toArray(), [x1, x2, x1 * Math.cos(1) - x2 * Math.sin(1), x2 * Math.cos(1) + x1 * Math.sin(1)]);
  });

  it("pairs dim i with dim i + D/2 (split-half, NeoX/Llama), not 2i with 2i + 1 (GPT-J)", () => {
    // D = 4, position 1, base 100: θ_0 = 1, θ_1 = 100^(−1/2) = 0.1. Only x[0] = 1: it turns towards x[2].
    close(run(Tensor.from([1, 0, 0, 0], [1, 1, 1, 4]), { base: 100, positionOffset: 1 }).toArray(), [
      Math.cos(1),
      0,
      Math.sin(1),
      0,
    ]);
    close(run(Tensor.from([0, 1, 0, 0], [1, 1, 1, 4]), { base: 100, positionOffset: 1 }).toArray(), [
      0,
      Math.cos(0.1),
      0,
      Math.sin(0.1),
    ]);
  });

  it("rotates only the first rotaryDim dims and copies the rest", () => {
    const x = Tensor.from([1, 2, 3, 4, 5, 6], [1, 1, 1, 6]);
    const y = run(x, { rotaryDim: 2, positionOffset: 2 }).toArray();
    close(y.slice(0, 2), [Math.cos(2) - 2 * Math.sin(2), 2 * Math.cos(2) + Math.sin(2)]);
    expect(y.slice(2)).toEqual([3, 4, 5, 6]);
  });

  it("positionOffset shifts every position: row l at offset k equals row l + k at offset 0", () => {
    const row = [0.1, -0.4, 0.9, 0.25, -0.6, 0.3];
    const five = Tensor.from(Array.from({ length: 5 }, () => row).flat(), [1, 1, 5, 6]);
    const shifted = run(Tensor.from(row, [1, 1, 1, 6]), { positionOffset: 4, base: 50 }).toArray();
    close(
      shifted,
      run(five, { base: 50 })
        .toArray()
        .slice(4 * 6),
    );
  });

  it("preserves the norm of every rotated pair", () => {
    const x = Tensor.from(
      Array.from({ length: 3 * 8 }, (_, k) => Math.cos(k * 1.7)),
      [1, 1, 3, 8],
    );
    const y = run(x, { positionOffset: 1000 }).toArray();
    const xs = x.toArray();
    for (let l = 0; l < 3; l++)
      for (let i = 0; i < 4; i++) {
        const a = l * 8 + i;
        expect(Math.hypot(y[a]!, y[a + 4]!)).toBeCloseTo(Math.hypot(xs[a]!, xs[a + 4]!), 6);
      }
  });

  it("reads strided input: heads split by a transpose view, and a view with a strided last axis and an offset", () => {
    const values = Array.from({ length: 2 * 3 * 2 * 6 }, (_, k) => Math.sin(k));
    const heads = Tensor.from(values, [2, 3, 2, 6]).permute([0, 2, 1, 3]); // [B, L, H, D] → [B, H, L, D], as q.heads
    expect(Array.from(ropeImpl(heads, 10000, 4, 7))).toEqual(Array.from(ropeImpl(heads.contiguous(), 10000, 4, 7)));
    const padded = Float32Array.from([9, 9, ...values]);
    const scrambled = new Tensor(padded, [6, 2, 3, 2], [12, 6, 2, 1], 2).permute([1, 3, 2, 0]); // [D, B, L, H] → [B, H, L, D]
    expect(scrambled.strides[3]).toBe(12);
    expect(Array.from(ropeImpl(scrambled, 10000, 4, 7))).toEqual(
      Array.from(ropeImpl(scrambled.contiguous(), 10000, 4, 7)),
    );
  });

  it("inverse rotates by −θ: out[i] = x1·cos θ + x2·sin θ, out[i + r/2] = x2·cos θ − x1·sin θ", () => {
    const x = Tensor.from([0.3, -0.7, 0.3, -0.7], [1, 1, 2, 2]); // positions 0 and 1, D = 2
    const [x1, x2] = [0.3, -0.7];
    close(run(x, { inverse: true }).toArray(), [
      x1,
      x2,
      x1 * Math.cos(1) + x2 * Math.sin(1),
      x2 * Math.cos(1) - x1 * Math.sin(1),
    ]);
  });

  it("inverse undoes the forward rotation and is its transpose (RoPE's backward), rotaryDim and strides included", () => {
    const values = Array.from({ length: 2 * 3 * 4 * 6 }, (_, k) => Math.sin(k * 0.7));
    const x = Tensor.from(values, [2, 4, 3, 6]).permute([0, 2, 1, 3]); // [2, 3, 4, 6], strided
    const g = Tensor.from(
      values.map((v) => v * v - 0.3),
      [2, 3, 4, 6],
    );
    for (const rotaryDim of [null, 4]) {
      const attrs = { rotaryDim, positionOffset: 5, base: 100 };
      const fwd = run(x, attrs);
      close(run(fwd, { ...attrs, inverse: true }).toArray(), x.toArray());
      // ⟨rope(x), g⟩ = ⟨x, rope⁻¹(g)⟩: the inverse of a rotation is its transpose.
      const lhs = fwd.toArray().reduce((a, v, k) => a + v * g.toArray()[k]!, 0);
      const rhs = run(g, { ...attrs, inverse: true })
        .toArray()
        .reduce((a, v, k) => a + v * x.toArray()[k]!, 0);
      expect(lhs).toBeCloseTo(rhs, 4);
    }
  });

  it("treats an absent inverse as the forward rotation, and rejects one that is not a boolean", () => {
    const x = Tensor.from([1, 2, 3, 4], [1, 1, 2, 2]);
    const bare = cpu.dispatch({
      kind: "rope",
      node: "q.rope",
      attrs: { base: 10000, rotaryDim: null, positionOffset: 0 },
      inputs: [x],
      outShape: x.shape,
    });
    expect(bare.toArray()).toEqual(run(x, { inverse: false }).toArray());
    try {
      run(x, { inverse: 1 as unknown as boolean });
      expect.unreachable();
    } catch (e) {
      expect(AttnGraphError.isInstance(e) && e.code).toBe("attr");
      expect((e as AttnGraphError).subject).toBe("q.rope.inverse");
    }
  });

  it("does not mutate its input", () => {
    const x = Tensor.from([1, 2, 3, 4], [1, 1, 2, 2]);
    run(x);
    expect(x.toArray()).toEqual([1, 2, 3, 4]);
  });

  it("rejects bad attributes and shapes with errors naming node and field", () => {
    const x = Tensor.zeros([1, 1, 2, 4]);
    expect(subject(() => run(x, { rotaryDim: 6 }))).toBe("q.rope.rotaryDim");
    expect(subject(() => run(x, { rotaryDim: 3 }))).toBe("q.rope.rotaryDim");
    expect(subject(() => run(x, { base: 0 }))).toBe("q.rope.base");
    expect(subject(() => run(x, { positionOffset: -1 }))).toBe("q.rope.positionOffset");
    // A dim name passes the declaration (a run binds it); one still unbound at the kernel is the kernel's attr error.
    expect(subject(() => run(x, { positionOffset: "P" }))).toBe("q.rope.positionOffset");
    expect(subject(() => run(Tensor.zeros([1, 1, 2, 5])))).toBe("q.rope.x");
    expect(subject(() => run(Tensor.zeros([1, 2, 5])))).toBe("q.rope.x");
    expect(run(Tensor.zeros([1, 1, 2, 5]), { rotaryDim: 4 }).shape).toEqual([1, 1, 2, 5]);
  });
});
