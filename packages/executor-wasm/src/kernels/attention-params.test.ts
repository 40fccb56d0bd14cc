// The host's params field lists against the module's own declarations, for the fused attention and its backward:
// every field at index · 4 bytes, in order, so a field added, removed or moved on one side only fails here instead of
// feeding the kernel a wrong number.
import { describe, expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import type { KernelExports } from "../module.js";
import { wasmExecutor } from "../test-util.js";
import { BLOCK_FIELDS, PACK_FIELDS, RUN_FIELDS } from "./attention-params.js";
import { GRAD_BLOCK_FIELDS, GRAD_PACK_FIELDS } from "./attention-grad-params.js";

const ex = await wasmExecutor();

/** Each entry taking three blocks: its module's layout and byte count, and the host's pack and block field lists. */
const LAYOUTS = [
  ["attentionRun", "attentionParamsLayout", "attentionParamsBytes", PACK_FIELDS, BLOCK_FIELDS],
  ["attentionGradRun", "attentionGradParamsLayout", "attentionGradParamsBytes", GRAD_PACK_FIELDS, GRAD_BLOCK_FIELDS],
] as const satisfies readonly (readonly [string, keyof KernelExports, keyof KernelExports, ...unknown[]])[];

describe("attention params blocks", () => {
  it.each(LAYOUTS)("%s: the host writes each field where the module reads it", (_, layout, bytes, pack, block) => {
    const e = ex.exportsForTests;
    const probe = ex.upload(new Tensor(new Float32Array(96), [96]));
    const count = e[layout](probe.address);
    const lists: readonly (readonly string[])[] = [pack, block, RUN_FIELDS];
    expect(count).toBe(pack.length + block.length + RUN_FIELDS.length);
    const offsets = Array.from(new Int32Array(ex.memory.buffer, probe.address, count));
    let at = 0;
    for (const fields of lists) {
      expect(offsets.slice(at, at + fields.length)).toEqual(fields.map((_f, i) => i * 4));
      at += fields.length;
    }
    // The three blocks side by side, as writeRunParams lays them out, within the host's params area (PARAMS_BYTES).
    expect(e[bytes]()).toBe(count * 4);
    expect(e[bytes]()).toBeLessThanOrEqual(320);
    ex.release(probe);
  });
});
