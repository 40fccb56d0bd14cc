// Packs packages the way a release would (`pnpm pack`: workspace:* ranges become the real versions, "files" decides
// what goes in) and reads a tarball's file list and manifest back, with the system's tar.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import type { WorkspacePackage } from "./workspace.js";

export interface Packed {
  readonly pkg: WorkspacePackage;
  /** Absolute path of the .tgz. */
  readonly tarball: string;
  /** Paths inside the tarball, without the leading "package/". */
  readonly files: readonly string[];
  /** The package.json as published (workspace: ranges resolved). */
  readonly manifest: Readonly<Record<string, unknown>>;
}

export function pack(pkg: WorkspacePackage, dest: string): Packed {
  const out = execFileSync("pnpm", ["pack", "--pack-destination", dest], {
    cwd: pkg.dir,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  // pnpm prints the file list, then the tarball's path as the last line.
  const tarball = out.trim().split("\n").at(-1)!.trim();
  if (!tarball.endsWith(".tgz") || !existsSync(tarball))
    throw new Error(`pnpm pack in ${pkg.path}: expected the tarball's path as the last line, got: ${out}`);
  const files = execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" })
    .split("\n")
    .filter(Boolean)
    .map((f) => f.replace(/^package\//, ""));
  const manifest = JSON.parse(
    execFileSync("tar", ["-xzOf", tarball, "package/package.json"], { encoding: "utf8" }),
  ) as Record<string, unknown>;
  return { pkg, tarball, files, manifest };
}
