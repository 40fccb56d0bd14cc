// The host's params field lists against the module's own declarations: every field at index · 4 bytes, in order, so
// a field added, removed or moved on one side only fails here instead of feeding the kernel a wrong number.
import { describe, expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import { wasmExecutor } from "../test-util.js";
import { BLOCK_FIELDS, PACK_FIELDS, RUN_FIELDS } from "./attention-params.js";

describe("attention params block", () => {
  it("the host writes each field where the module reads it", async () => {
    const ex = await wasmExecutor();
    const e = ex.exportsForTests;
    const probe = ex.upload(new Tensor(new Float32Array(96), [96]));
    const count = e.attentionParamsLayout(probe.address);
    expect(count).toBe(PACK_FIELDS.length + BLOCK_FIELDS.length + RUN_FIELDS.length);
    const offsets = Array.from(new Int32Array(ex.memory.buffer, probe.address, count));
    expect(offsets.slice(0, PACK_FIELDS.length)).toEqual(PACK_FIELDS.map((_, i) => i * 4));
    expect(offsets.slice(PACK_FIELDS.length, PACK_FIELDS.length + BLOCK_FIELDS.length)).toEqual(
      BLOCK_FIELDS.map((_, i) => i * 4),
    );
    expect(offsets.slice(PACK_FIELDS.length + BLOCK_FIELDS.length)).toEqual(RUN_FIELDS.map((_, i) => i * 4));
    // attentionRun's three blocks side by side, as writeRunParams lays them out.
    expect(e.attentionParamsBytes()).toBe((PACK_FIELDS.length + BLOCK_FIELDS.length + RUN_FIELDS.length) * 4);
    expect(e.attentionParamsBytes()).toBeLessThanOrEqual(320); // the host's params area (PARAMS_BYTES)
    ex.release(probe);
  });
});
