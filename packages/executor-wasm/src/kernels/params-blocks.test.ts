// The host's params field lists against the module's own declarations, as the compiler lays them out
// (test-layouts.ts): every field the host writes at the offset the module reads it from, and the block no longer
// than the host writes, so a field added, removed or moved on one side only fails here.
import { describe, expect, it } from "vitest";
import { MASK_INT_FIELDS, MASK_INTS_AT } from "./mask.js";
import { ROWS4_FIELDS } from "./rope.js";
import { PAIR_FIELDS } from "./add.js";
import { AFFINE_FIELDS } from "./layer-norm.js";
import { LOOKUP_FIELDS } from "./embedding.js";
import { TARGET_FIELDS } from "./cross-entropy.js";
import { OPTIM_FLOAT_FIELDS, OPTIM_INT_FIELDS } from "./optim-params.js";
import { MATMUL_FIELDS, MATMUL_PARAMS_BYTES } from "./matmul-params.js";
import { moduleLayouts } from "./test-layouts.js";

// Class → its file under assembly/ and the host's fields in the order the host writes them.
const layouts = await moduleLayouts({
  MaskParams: ["mask", ["scale", ...MASK_INT_FIELDS]],
  Rows4Params: ["position", ROWS4_FIELDS],
  PairParams: ["add", PAIR_FIELDS],
  AffineParams: ["layer-norm", AFFINE_FIELDS],
  OptimParams: ["adam", [...OPTIM_FLOAT_FIELDS, ...OPTIM_INT_FIELDS]],
  LookupParams: ["embedding", LOOKUP_FIELDS],
  TargetParams: ["cross-entropy", TARGET_FIELDS],
  MatmulParams: ["matmul", MATMUL_FIELDS],
});

const fourBytes = (fields: readonly string[], from = 0) => fields.map((_, i) => from + i * 4);
const floats = (fields: readonly string[]) => fields.map((_, i) => i * 8);

/** Each block, the kernels that read it, and the offsets the host writes its fields at (its writer's comment). */
const cases: readonly [cls: string, users: string, offsets: readonly number[]][] = [
  // `scale` a float64 at 0, then every integer field at MASK_INTS_AT + index · 4.
  ["MaskParams", "mask", [0, ...fourBytes(MASK_INT_FIELDS, MASK_INTS_AT)]],
  ["Rows4Params", "rope, alibi", fourBytes(ROWS4_FIELDS)],
  ["PairParams", "add, mul, addLayerNorm", fourBytes(PAIR_FIELDS)],
  // eps a float64 at 0, then 4 bytes a field (writeAffine).
  ["AffineParams", "layerNorm, layerNormGrad, rmsNormGrad", [0, ...fourBytes(AFFINE_FIELDS.slice(1), 8)]],
  [
    "OptimParams",
    "adam, sgd",
    [...floats(OPTIM_FLOAT_FIELDS), ...fourBytes(OPTIM_INT_FIELDS, OPTIM_FLOAT_FIELDS.length * 8)],
  ],
  ["LookupParams", "embedding, embeddingGrad", fourBytes(LOOKUP_FIELDS)],
  // div a float64 at 0, then 4 bytes a field (writeTargets).
  ["TargetParams", "crossEntropy, crossEntropyGrad", [0, ...fourBytes(TARGET_FIELDS.slice(1), 8)]],
  ["MatmulParams", "matmul, matmulPacked, matvecPackedColumns, matmulSkipZero", fourBytes(MATMUL_FIELDS)],
];

describe("params blocks", () => {
  it.each(cases)("%s (%s): the host writes each field where the module reads it", (cls, _, offsets) => {
    const layout = layouts[cls]!;
    expect(layout.offsets).toEqual(offsets);
    // The last field is 4 bytes wide: the block ends right after it, with no field the host leaves unwritten.
    expect(layout.bytes).toBe(offsets.at(-1)! + 4);
  });

  it("the host's areas hold their blocks", () => {
    expect(MASK_INTS_AT + MASK_INT_FIELDS.length * 4).toBeLessThanOrEqual(320); // the host's params area
    expect(MATMUL_FIELDS.length * 4).toBeLessThanOrEqual(MATMUL_PARAMS_BYTES); // the room before a call's scratch
  });
});
