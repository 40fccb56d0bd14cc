// ARCHITECTURE.md kept true where a test can: its table of rooms lists every workspace package by folder and name,
// with exactly its runtime dependencies inside the workspace, and its op list is the registry's built-in kinds.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createOpRegistry } from "@attngraph/graph";
import { describe, expect, it } from "vitest";
import { repoRoot, workspacePackages } from "./workspace.js";

const text = readFileSync(join(repoRoot, "ARCHITECTURE.md"), "utf8");

/** The rows of the "Rooms" table: folder, package, depends on (short names, "—" for none). */
function rooms(): { folder: string; name: string; deps: string[] }[] {
  const section = text.slice(text.indexOf("## Rooms"), text.indexOf("\n## ", text.indexOf("## Rooms") + 1));
  return [...section.matchAll(/^\| (\S+) \| (\S+) \| .* \| ([^|]+) \|$/gm)]
    .filter((m) => m[1] !== "folder" && !m[1]!.startsWith("---"))
    .map((m) => ({
      folder: m[1]!,
      name: m[2]!,
      deps: m[3]!.trim() === "—" ? [] : m[3]!.split(",").map((d) => d.trim()),
    }));
}

/** A package's workspace dependencies by short name ("@attngraph/graph" → "graph"). */
function workspaceDeps(manifest: Readonly<Record<string, unknown>>, names: ReadonlySet<string>): string[] {
  return Object.keys((manifest["dependencies"] as Record<string, string> | undefined) ?? {})
    .filter((d) => names.has(d))
    .map((d) => d.replace(/^@attngraph\//, ""));
}

describe("ARCHITECTURE.md", () => {
  const packages = workspacePackages();
  const names = new Set(packages.map((p) => p.name));

  it("lists every workspace package, by folder and name, and nothing else", () => {
    expect(
      rooms()
        .map((r) => `${r.folder} ${r.name}`)
        .sort(),
    ).toEqual(packages.map((p) => `${p.path} ${p.name}`).sort());
  });

  it("gives each package exactly its runtime dependencies inside the workspace", () => {
    const byName = new Map(rooms().map((r) => [r.name, r.deps]));
    for (const p of packages)
      expect([...(byName.get(p.name) ?? [])].sort(), p.name).toEqual(workspaceDeps(p.manifest, names).sort());
  });

  it("lists the registry's built-in op kinds, in its order", () => {
    const section = text.slice(text.indexOf("## Op kinds"), text.indexOf("\n## ", text.indexOf("## Op kinds") + 1));
    const listed = [...section.matchAll(/`([a-z][a-z-]*)`/g)].map((m) => m[1]!).filter((k) => k !== "builtinOps");
    expect(listed).toEqual(createOpRegistry().kinds());
  });
});
