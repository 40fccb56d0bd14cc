// The release notes and versions come from the changesets in .changeset/: this runs `changeset version` as a dry run
// on a copy of the workspace's manifests (never on the checkout), and checks what a release would get: a version above
// 0.0.0 and a CHANGELOG.md holding each changeset's text for every package a changeset names, every public package at
// one version (the "fixed" group), and workspace ranges kept.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot, workspacePackages } from "./workspace.js";

interface Changeset {
  readonly file: string;
  readonly packages: readonly string[];
  readonly summary: string;
}

/** The front matter's `"name": bump` lines and the text after it. */
function readChangeset(file: string): Changeset {
  const text = readFileSync(file, "utf8");
  const m = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(text);
  if (!m) throw new Error(`${file}: expected front matter between --- lines`);
  const packages = [...m[1]!.matchAll(/^["']?([^"':]+)["']?\s*:\s*(major|minor|patch)\s*$/gm)].map((x) => x[1]!);
  return { file, packages, summary: m[2]!.trim() };
}

const changesetDir = join(repoRoot, ".changeset");
const changesets = readdirSync(changesetDir)
  .filter((f) => f.endsWith(".md") && f !== "README.md")
  .map((f) => readChangeset(join(changesetDir, f)));

describe("changeset version (dry run on a copy)", () => {
  const pkgs = workspacePackages();
  let copy: string;
  let output: string;

  beforeAll(() => {
    copy = mkdtempSync(join(tmpdir(), "attngraph-changeset-"));
    for (const f of ["package.json", "pnpm-workspace.yaml"]) cpSync(join(repoRoot, f), join(copy, f));
    cpSync(changesetDir, join(copy, ".changeset"), { recursive: true });
    for (const p of pkgs) {
      mkdirSync(join(copy, p.path), { recursive: true });
      cpSync(join(p.dir, "package.json"), join(copy, p.path, "package.json"));
    }
    const bin = join(repoRoot, "node_modules/@changesets/cli/bin.js");
    output = execFileSync(process.execPath, [bin, "version"], {
      cwd: copy,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
  }, 120_000);

  afterAll(() => {
    if (copy) rmSync(copy, { recursive: true, force: true });
  });

  const bumped = (path: string) =>
    JSON.parse(readFileSync(join(copy, path, "package.json"), "utf8")) as {
      version: string;
      dependencies?: Record<string, string>;
    };

  it("there are changesets, and each names only workspace packages", () => {
    expect(changesets.length).toBeGreaterThan(0);
    const names = new Set(pkgs.map((p) => p.name));
    for (const c of changesets) {
      expect(c.packages.length, `${c.file}: no packages in its front matter`).toBeGreaterThan(0);
      for (const n of c.packages)
        expect(names.has(n), `${c.file} names ${n}, which is not a workspace package`).toBe(true);
      expect(c.summary.length, `${c.file}: empty summary`).toBeGreaterThan(20);
    }
  });

  it("consumed every changeset", () => {
    const left = readdirSync(join(copy, ".changeset")).filter((f) => f.endsWith(".md") && f !== "README.md");
    expect(left, output).toEqual([]);
  });

  it("gives every public package one version above 0.0.0, kept workspace ranges", () => {
    const publics = pkgs.filter((p) => !p.private);
    const versions = new Set(publics.map((p) => bumped(p.path).version));
    expect([...versions].length, `public versions: ${[...versions].join(", ")}`).toBe(1);
    expect([...versions][0]).not.toBe("0.0.0");
    for (const p of publics) {
      for (const [dep, range] of Object.entries(bumped(p.path).dependencies ?? {})) {
        if (dep.startsWith("@attngraph/")) expect(range, `${p.name} → ${dep}`).toBe("workspace:*");
      }
    }
  });

  it("writes each changeset's text into the CHANGELOG.md of every package it names", () => {
    for (const c of changesets) {
      const firstLine = c.summary.split("\n")[0]!;
      for (const name of c.packages) {
        const p = pkgs.find((x) => x.name === name)!;
        const log = join(copy, p.path, "CHANGELOG.md");
        expect(existsSync(log), `${p.path}/CHANGELOG.md`).toBe(true);
        expect(readFileSync(log, "utf8"), `${p.path}/CHANGELOG.md lacks ${c.file}`).toContain(firstLine);
      }
    }
  });
});
