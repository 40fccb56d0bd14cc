// The workspace's packages as the tarball checks see them: every package.json under the folders pnpm-workspace.yaml
// lists. Public ones (no "private": true) are what a user installs; those are the ones packed and checked.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot: string = fileURLToPath(new URL("../../..", import.meta.url));

export interface WorkspacePackage {
  readonly name: string;
  readonly version: string;
  /** Absolute path of the package's folder. */
  readonly dir: string;
  /** Its folder relative to the repo root ("packages/tensor"). */
  readonly path: string;
  readonly private: boolean;
  readonly manifest: Readonly<Record<string, unknown>>;
}

/** The `- "packages/*"` globs of pnpm-workspace.yaml (only the `dir/*` form, which is all this repo uses). */
function workspaceGlobs(): string[] {
  const yaml = readFileSync(join(repoRoot, "pnpm-workspace.yaml"), "utf8");
  const globs = [...yaml.matchAll(/^\s*-\s*["']?([\w.-]+)\/\*["']?\s*$/gm)].map((m) => m[1]!);
  if (globs.length === 0) throw new Error('pnpm-workspace.yaml: no `- "dir/*"` package globs found');
  return globs;
}

export function workspacePackages(): WorkspacePackage[] {
  const out: WorkspacePackage[] = [];
  for (const glob of workspaceGlobs()) {
    for (const entry of readdirSync(join(repoRoot, glob), { withFileTypes: true })) {
      const file = join(repoRoot, glob, entry.name, "package.json");
      if (!entry.isDirectory() || !existsSync(file)) continue;
      const manifest = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
      out.push({
        name: String(manifest["name"]),
        version: String(manifest["version"]),
        dir: join(repoRoot, glob, entry.name),
        path: `${glob}/${entry.name}`,
        private: manifest["private"] === true,
        manifest,
      });
    }
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

export function publicPackages(): WorkspacePackage[] {
  return workspacePackages().filter((p) => !p.private);
}
