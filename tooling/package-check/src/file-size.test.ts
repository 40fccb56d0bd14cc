// Rooms stay small (issue 30): no TypeScript source file outside the kernels is over 400 lines. Kernels (an
// executor's `kernels/`, the AssemblyScript in `assembly/`) are exempt: a hot loop is kept whole on purpose. Tests and
// test helpers are not sources. Lines are counted as `wc -l` counts them, comments included.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "./workspace.js";

const MAX_LINES = 400;

/** Source files git tracks in packages/, apps/ and tooling/, without kernels, tests and test helpers. */
function sources(): string[] {
  const files = execFileSync("git", ["ls-files", "-z", "--", "packages", "apps", "tooling"], {
    cwd: repoRoot,
    encoding: "utf8",
  }).split("\0");
  return files.filter(
    (f) =>
      /\.(ts|mts|tsx)$/.test(f) &&
      !f.endsWith(".d.ts") &&
      !/\.test\.tsx?$/.test(f) &&
      !/(^|\/)test-[^/]*$/.test(f) &&
      !/(^|\/)(test|kernels|assembly)\//.test(f),
  );
}

const lineCount = (file: string): number => {
  const text = readFileSync(join(repoRoot, file), "utf8");
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
};

describe("source file size", () => {
  it("finds the sources (the filter is not empty by mistake)", () => {
    const found = sources();
    expect(found).toContain("packages/runtime/src/session.ts");
    expect(found).not.toContain("packages/executor-cpu/src/kernels/matmul.ts");
    expect(found.length).toBeGreaterThan(300);
  });

  it(`no TypeScript source outside the kernels is over ${MAX_LINES} lines`, () => {
    const over = sources()
      .map((f) => ({ f, n: lineCount(f) }))
      .filter(({ n }) => n > MAX_LINES)
      .map(({ f, n }) => `${f}: ${n} lines`);
    expect(over).toEqual([]);
  });
});
