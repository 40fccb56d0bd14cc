// `pnpm -s attngraph conformance ... > out.txt` must leave only the runner's lines in out.txt: the root scripts build
// first, and turbo prints its banner on stdout, so each build step before `node` sends its stdout to stderr.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../../package.json", import.meta.url));
const scripts: Record<string, string> = JSON.parse(readFileSync(root, "utf8")).scripts;

/** Scripts whose steps (`a && b && node ...`) end in a node program and run a build before it. */
const buildThenNode = Object.entries(scripts).filter(([, cmd]) => {
  const steps = cmd.split("&&").map((s) => s.trim());
  return steps.at(-1)!.startsWith("node ") && steps.slice(0, -1).some((s) => /\bbuild/.test(s));
});

describe("root package.json scripts", () => {
  it("the scripts that build and then run a program include the five we know of (so the check below cannot pass empty)", () => {
    expect(buildThenNode.map(([name]) => name)).toEqual(
      expect.arrayContaining(["attngraph", "bench", "demo", "gen:docs", "soak"]),
    );
  });

  it.each(buildThenNode)("%s sends the build's stdout to stderr, leaving stdout to the program", (_name, cmd) => {
    for (const step of cmd.split("&&").slice(0, -1)) expect(step.trim()).toMatch(/\s1?>&2$/);
  });
});
