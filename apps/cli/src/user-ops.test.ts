import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { UsageError } from "./io.js";
import { loadUserOps } from "./user-ops.js";

/** A module file with `source`, in a fresh folder. */
function module(source: string): string {
  const path = join(mkdtempSync(join(tmpdir(), "attngraph-ops-")), "m.mjs");
  writeFileSync(path, source);
  return path;
}

const OP = `{ kind: "twice", doc: "2x", inputs: [{ name: "x" }], attrs: {}, inferShape: ([x]) => x }`;

describe("loadUserOps", () => {
  it("takes a module's ops and kernels; kernels alone (for built-in kinds) too", async () => {
    const both = await loadUserOps(
      module(`export const ops = [${OP}]; export const kernels = { cpu: { twice: () => {} } };`),
    );
    expect(both.registry.get("twice")?.kind).toBe("twice");
    expect([...both.kernels.get("cpu")!.keys()]).toEqual(["twice"]);
    expect(
      (await loadUserOps(module("export const kernels = { wasm: { softmax: () => {} } };"))).kernels.get("wasm")?.size,
    ).toBe(1);
  });

  // Each was taken without a word and then did nothing.
  it.each([
    ["export const foo = 1;", "got exports foo"],
    ["export default { ops: [] };", "got exports default"],
    ["export const ops = []; export const kernels = { cpu: {} };", "got exports kernels, ops"],
    ["", "got no exports"],
  ])("a module with no op and no kernel (%s) names itself and what it must export", async (source, got) => {
    const path = module(source);
    const loading = loadUserOps(path);
    await expect(loading).rejects.toThrow(UsageError);
    await expect(loading).rejects.toThrow(
      `--ops ${path}: exports no op and no kernel, expected "ops" (an array of defineOp() results) or "kernels" ({ executor: { kind: kernel } }), ${got}`,
    );
  });
});
