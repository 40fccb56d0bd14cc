// The host's params field lists against the module's own declarations, for the fused attention and its backward
// (test-layouts.ts: as the compiler lays them out): every field at index · 4 bytes, in order, so a field added,
// removed or moved on one side only fails here instead of feeding the kernel a wrong number.
import { describe, expect, it } from "vitest";
import type { KernelExports } from "../module.js";
import { wasmExecutor } from "../test-util.js";
import { BLOCK_FIELDS, PACK_FIELDS, RUN_FIELDS } from "./attention-params.js";
import { GRAD_BLOCK_FIELDS, GRAD_PACK_FIELDS } from "./attention-grad-params.js";
import { moduleLayouts } from "./test-layouts.js";

const ex = await wasmExecutor();

const layouts = await moduleLayouts({
  PackParams: ["attention", PACK_FIELDS],
  BlockParams: ["attention", BLOCK_FIELDS],
  RunParams: ["attention", RUN_FIELDS],
  GradPackParams: ["attention-grad", GRAD_PACK_FIELDS],
  GradBlockParams: ["attention-grad", GRAD_BLOCK_FIELDS],
});

/** Each entry taking three blocks: its module's byte count, and its three blocks (class, the host's field list). */
const LAYOUTS = [
  [
    "attentionRun",
    "attentionParamsBytes",
    [
      ["PackParams", PACK_FIELDS],
      ["BlockParams", BLOCK_FIELDS],
      ["RunParams", RUN_FIELDS],
    ],
  ],
  [
    "attentionGradRun",
    "attentionGradParamsBytes",
    [
      ["GradPackParams", GRAD_PACK_FIELDS],
      ["GradBlockParams", GRAD_BLOCK_FIELDS],
      ["RunParams", RUN_FIELDS],
    ],
  ],
] as const satisfies readonly (readonly [
  string,
  keyof KernelExports,
  readonly (readonly [string, readonly string[]])[],
])[];

describe("attention params blocks", () => {
  it.each(LAYOUTS)("%s: the host writes each field where the module reads it", (_, bytes, blocks) => {
    for (const [cls, fields] of blocks) {
      expect(layouts[cls]!.offsets).toEqual(fields.map((_f, i) => i * 4));
      expect(layouts[cls]!.bytes).toBe(fields.length * 4);
    }
    // The three blocks side by side, as writeRunParams lays them out, within the host's params area (PARAMS_BYTES).
    const count = blocks.reduce((n, [, fields]) => n + fields.length, 0);
    expect(ex.exportsForTests[bytes]()).toBe(count * 4);
    expect(ex.exportsForTests[bytes]()).toBeLessThanOrEqual(320);
  });
});
