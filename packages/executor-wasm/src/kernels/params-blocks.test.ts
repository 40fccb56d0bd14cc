// The host's params field lists against the module's own declarations: MaskParams (assembly/mask.ts: `scale` at 0,
// then every integer field at MASK_INTS_AT + index · 4) and Rows4Params (assembly/position.ts: index · 4), so a field
// added, removed or moved on one side only fails here.
import { describe, expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import { wasmExecutor } from "../test-util.js";
import { MASK_INT_FIELDS, MASK_INTS_AT } from "./mask.js";
import { ROWS4_FIELDS } from "./rope.js";
import { PAIR_FIELDS } from "./add.js";
import { AFFINE_FIELDS } from "./layer-norm.js";
import { LOOKUP_FIELDS } from "./embedding.js";
import { TARGET_FIELDS } from "./cross-entropy.js";
import { OPTIM_FLOAT_FIELDS, OPTIM_INT_FIELDS } from "./optim-params.js";
import { MATMUL_FIELDS, MATMUL_PARAMS_BYTES } from "./matmul-params.js";

describe("params blocks", () => {
  it("MaskParams: the host writes each field where the module reads it", async () => {
    const ex = await wasmExecutor();
    const probe = ex.upload(new Tensor(new Float32Array(64), [64]));
    const count = ex.exportsForTests.maskParamsLayout(probe.address);
    expect(count).toBe(1 + MASK_INT_FIELDS.length);
    const offsets = Array.from(new Int32Array(ex.memory.buffer, probe.address, count));
    expect(offsets).toEqual([0, ...MASK_INT_FIELDS.map((_, i) => MASK_INTS_AT + i * 4)]);
    expect(MASK_INTS_AT + MASK_INT_FIELDS.length * 4).toBeLessThanOrEqual(320); // the host's params area
    ex.release(probe);
  });

  it("Rows4Params (rope, alibi): the host writes each field where the module reads it", async () => {
    const ex = await wasmExecutor();
    const probe = ex.upload(new Tensor(new Float32Array(16), [16]));
    const count = ex.exportsForTests.rows4ParamsLayout(probe.address);
    expect(count).toBe(ROWS4_FIELDS.length);
    expect(Array.from(new Int32Array(ex.memory.buffer, probe.address, count))).toEqual(
      ROWS4_FIELDS.map((_, i) => i * 4),
    );
    ex.release(probe);
  });

  it("PairParams (add, mul, addLayerNorm): the host writes each field where the module reads it", async () => {
    const ex = await wasmExecutor();
    const probe = ex.upload(new Tensor(new Float32Array(16), [16]));
    const count = ex.exportsForTests.pairParamsLayout(probe.address);
    expect(count).toBe(PAIR_FIELDS.length);
    expect(Array.from(new Int32Array(ex.memory.buffer, probe.address, count))).toEqual(
      PAIR_FIELDS.map((_, i) => i * 4),
    );
    ex.release(probe);
  });

  it("AffineParams (layerNorm, layerNormGrad, rmsNormGrad): the host writes each field where the module reads it", async () => {
    const ex = await wasmExecutor();
    const probe = ex.upload(new Tensor(new Float32Array(16), [16]));
    const count = ex.exportsForTests.affineParamsLayout(probe.address);
    expect(count).toBe(AFFINE_FIELDS.length);
    // eps a float64 at 0, then 4 bytes a field (writeAffine).
    expect(Array.from(new Int32Array(ex.memory.buffer, probe.address, count))).toEqual([0, 8, 12, 16, 20]);
    ex.release(probe);
  });

  it("OptimParams (adam, sgd): the host writes each field where the module reads it", async () => {
    const ex = await wasmExecutor();
    const probe = ex.upload(new Tensor(new Float32Array(16), [16]));
    const count = ex.exportsForTests.optimParamsLayout(probe.address);
    expect(count).toBe(OPTIM_FLOAT_FIELDS.length + OPTIM_INT_FIELDS.length);
    const ints = OPTIM_FLOAT_FIELDS.length * 8;
    expect(Array.from(new Int32Array(ex.memory.buffer, probe.address, count))).toEqual([
      ...OPTIM_FLOAT_FIELDS.map((_, i) => i * 8),
      ...OPTIM_INT_FIELDS.map((_, i) => ints + i * 4),
    ]);
    ex.release(probe);
  });

  it("LookupParams (embedding, embeddingGrad): the host writes each field where the module reads it", async () => {
    const ex = await wasmExecutor();
    const probe = ex.upload(new Tensor(new Float32Array(16), [16]));
    const count = ex.exportsForTests.lookupParamsLayout(probe.address);
    expect(count).toBe(LOOKUP_FIELDS.length);
    expect(Array.from(new Int32Array(ex.memory.buffer, probe.address, count))).toEqual(
      LOOKUP_FIELDS.map((_, i) => i * 4),
    );
    ex.release(probe);
  });

  it("TargetParams (crossEntropy, crossEntropyGrad): the host writes each field where the module reads it", async () => {
    const ex = await wasmExecutor();
    const probe = ex.upload(new Tensor(new Float32Array(16), [16]));
    const count = ex.exportsForTests.targetParamsLayout(probe.address);
    expect(count).toBe(TARGET_FIELDS.length);
    // div a float64 at 0, then 4 bytes a field (writeTargets).
    expect(Array.from(new Int32Array(ex.memory.buffer, probe.address, count))).toEqual([0, 8, 12, 16, 20, 24, 28]);
    ex.release(probe);
  });

  it("MatmulParams (matmul, matmulPacked, matvecPackedColumns, matmulSkipZero): each field where the module reads it", async () => {
    const ex = await wasmExecutor();
    const probe = ex.upload(new Tensor(new Float32Array(16), [16]));
    const count = ex.exportsForTests.matmulParamsLayout(probe.address);
    expect(count).toBe(MATMUL_FIELDS.length);
    expect(Array.from(new Int32Array(ex.memory.buffer, probe.address, count))).toEqual(
      MATMUL_FIELDS.map((_, i) => i * 4),
    );
    expect(MATMUL_FIELDS.length * 4).toBeLessThanOrEqual(MATMUL_PARAMS_BYTES); // the room before a call's scratch
    ex.release(probe);
  });
});
