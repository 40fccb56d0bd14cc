// matmulPacked's path for one to three rows (assembly/matmul.ts `matvecPacked`: a decoding step's projections, x [1, In]
// against an uploaded, prepacked weight): the CPU executor's numbers, and bit for bit the rows of the 5-row tile (the
// same multiply-adds per column in the same k order), over column counts that end mid-group and mid-panel, depths past
// one k block, with and without a bias. From three full k blocks (768) on, the blocks go three at a time skewed across
// panels: depths 768 and 3072 (all skewed), 800 and 1000 (a partial block after), 1280 (two full blocks after), with one
// to three panels (8, 12, 13 and 24 columns: the skew's first and last steps overlap) and a partial last panel.
import { describe, expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import { onCpu, onWasm, random, wasmExecutor, worst } from "../test-util.js";

const ex = await wasmExecutor();
const bits = (t: Tensor) => Array.from(new Uint32Array(Float32Array.from(t.toFloat32Array()).buffer));

describe("projection of one row (matvec on the prepacked weight)", () => {
  for (const [nIn, nOut] of [
    [1, 1],
    [5, 7],
    [64, 32],
    [300, 45],
    [768, 768],
    [513, 100],
    [256, 8],
    [40, 36],
    [1000, 45],
    [800, 13],
    [1280, 100],
    [3072, 24],
    [768, 12],
    [768, 8],
  ] as const) {
    for (const withBias of [false, true]) {
      it(`[1, ${nIn}] · [${nOut}, ${nIn}]ᵀ${withBias ? " + bias" : ""}: the CPU executor's numbers, the tile's bits`, () => {
        const w = random([nOut, nIn], nOut + nIn);
        const b = withBias ? random([nOut], 3) : undefined;
        // 7 rows: rows 0..4 on the full 5-row tile, 5..6 on its edge; each alone takes the matvec.
        const x = random([7, nIn], nIn);
        const all = onWasm(ex, "projection", {}, [x, w, b], [7, nOut]);
        const xs = x.toFloat32Array();
        for (const r of [0, 4, 6]) {
          const xr = new Tensor(Float32Array.from(xs.subarray(r * nIn, (r + 1) * nIn)), [1, 1, nIn]);
          const made = ex.prepacked.made;
          const got = onWasm(ex, "projection", {}, [xr, w, b], [1, 1, nOut]);
          expect(ex.prepacked.made).toBe(made + 1); // the uploaded weight was packed: the matvec ran on its panels
          expect(bits(got)).toEqual(bits(all).slice(r * nOut, (r + 1) * nOut));
          // Absolute tolerance grows with the depth: a sum of nIn rounded products that cancels to near 0 is off by more.
          expect(
            worst(got, onCpu("projection", {}, [xr, w, b], [1, 1, nOut]), 1e-5 * Math.max(1, nIn / 512), 1e-4),
          ).toBeLessThan(1);
        }
        // Two rows (rows 5 and 6, the tile's edge) and three (rows 4 to 6) take the matvec too, row by row.
        const two = onWasm(
          ex,
          "projection",
          {},
          [new Tensor(Float32Array.from(xs.subarray(5 * nIn)), [2, nIn]), w, b],
          [2, nOut],
        );
        expect(bits(two)).toEqual(bits(all).slice(5 * nOut));
        const three = onWasm(
          ex,
          "projection",
          {},
          [new Tensor(Float32Array.from(xs.subarray(4 * nIn)), [3, nIn]), w, b],
          [3, nOut],
        );
        expect(bits(three)).toEqual(bits(all).slice(4 * nOut));
      });
    }
  }
});
