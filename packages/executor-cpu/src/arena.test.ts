import { Tensor } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { CpuArena } from "./arena.js";

describe("CpuArena", () => {
  it("hands out dense views at element offsets and recognises its own memory", () => {
    const arena = new CpuArena(64);
    const a = arena.view(16, [2, 3]);
    a.data.set([1, 2, 3, 4, 5, 6]);
    expect(arena.buffer.subarray(16, 22)).toEqual(Float32Array.from([1, 2, 3, 4, 5, 6]));
    expect(arena.holds(a)).toBe(true);
    expect(arena.holds(Tensor.zeros([2, 3]))).toBe(false);
    expect(arena.holds(new CpuArena(64).view(0, [1]))).toBe(false);
  });

  it("copies a strided value into a destination", () => {
    const arena = new CpuArena(32);
    const src = Tensor.from([1, 2, 3, 4, 5, 6], [2, 3]).transpose(0, 1);
    const dst = arena.copy(src, arena.view(8, [3, 2]));
    expect(dst.toArray()).toEqual([1, 4, 2, 5, 3, 6]);
  });
});
