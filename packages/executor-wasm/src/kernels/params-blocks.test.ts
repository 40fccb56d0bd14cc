// The host's params field lists against the module's own declarations: MaskParams (assembly/mask.ts: `scale` at 0,
// then every integer field at MASK_INTS_AT + index · 4) and Rows4Params (assembly/position.ts: index · 4), so a field
// added, removed or moved on one side only fails here.
import { describe, expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import type { KernelExports } from "../module.js";
import { wasmExecutor } from "../test-util.js";
import { MASK_INT_FIELDS, MASK_INTS_AT } from "./mask.js";
import { ROWS4_FIELDS } from "./rope.js";
import { PAIR_FIELDS } from "./add.js";
import { AFFINE_FIELDS } from "./layer-norm.js";
import { LOOKUP_FIELDS } from "./embedding.js";
import { TARGET_FIELDS } from "./cross-entropy.js";
import { OPTIM_FLOAT_FIELDS, OPTIM_INT_FIELDS } from "./optim-params.js";
import { MATMUL_FIELDS, MATMUL_PARAMS_BYTES } from "./matmul-params.js";

/** The module's exports that report a params block's field offsets. */
type LayoutExport = Extract<keyof KernelExports, `${string}ParamsLayout`>;

describe("params blocks", () => {
  /** The offsets the module's `layout` export reports (its field count checked against `expected`'s). */
  async function moduleOffsets(layout: LayoutExport, expected: readonly number[]): Promise<number[]> {
    const ex = await wasmExecutor();
    const probe = ex.upload(new Tensor(new Float32Array(64), [64]));
    try {
      const count = ex.exportsForTests[layout](probe.address);
      expect(count).toBe(expected.length);
      return Array.from(new Int32Array(ex.memory.buffer, probe.address, count));
    } finally {
      ex.release(probe);
    }
  }

  const fourBytes = (fields: readonly string[], from = 0) => fields.map((_, i) => from + i * 4);
  const cases: readonly [string, LayoutExport, readonly number[]][] = [
    // `scale` a float64 at 0, then every integer field at MASK_INTS_AT + index · 4.
    ["MaskParams", "maskParamsLayout", [0, ...fourBytes(MASK_INT_FIELDS, MASK_INTS_AT)]],
    ["Rows4Params (rope, alibi)", "rows4ParamsLayout", fourBytes(ROWS4_FIELDS)],
    ["PairParams (add, mul, addLayerNorm)", "pairParamsLayout", fourBytes(PAIR_FIELDS)],
    // eps a float64 at 0, then 4 bytes a field (writeAffine).
    [
      "AffineParams (layerNorm, layerNormGrad, rmsNormGrad)",
      "affineParamsLayout",
      [0, ...fourBytes(AFFINE_FIELDS.slice(1), 8)],
    ],
    [
      "OptimParams (adam, sgd)",
      "optimParamsLayout",
      [...OPTIM_FLOAT_FIELDS.map((_, i) => i * 8), ...fourBytes(OPTIM_INT_FIELDS, OPTIM_FLOAT_FIELDS.length * 8)],
    ],
    ["LookupParams (embedding, embeddingGrad)", "lookupParamsLayout", fourBytes(LOOKUP_FIELDS)],
    // div a float64 at 0, then 4 bytes a field (writeTargets).
    [
      "TargetParams (crossEntropy, crossEntropyGrad)",
      "targetParamsLayout",
      [0, ...fourBytes(TARGET_FIELDS.slice(1), 8)],
    ],
    [
      "MatmulParams (matmul, matmulPacked, matvecPackedColumns, matmulSkipZero)",
      "matmulParamsLayout",
      fourBytes(MATMUL_FIELDS),
    ],
  ];
  for (const [name, layout, offsets] of cases) {
    it(`${name}: the host writes each field where the module reads it`, async () => {
      expect(await moduleOffsets(layout, offsets)).toEqual(offsets);
    });
  }

  it("the host's areas hold their blocks", () => {
    expect(MASK_INTS_AT + MASK_INT_FIELDS.length * 4).toBeLessThanOrEqual(320); // the host's params area
    expect(MATMUL_FIELDS.length * 4).toBeLessThanOrEqual(MATMUL_PARAMS_BYTES); // the room before a call's scratch
  });
});
