// A scratch project outside the workspace, as a user would make one: a package.json whose dependencies are the
// tarballs (file: specs) and a few registry packages, installed with plain npm. Nothing of the workspace's
// node_modules is visible from there: the tarballs' manifests must carry every dependency they need.
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Packed } from "./pack.js";

export interface Scratch {
  readonly dir: string;
  /** Runs `command args` in the project; resolves with its output, rejects with the output on a non-zero exit. */
  run(command: string, args: readonly string[], env?: Readonly<Record<string, string>>): Promise<string>;
}

/**
 * Makes the project in a new folder under the OS temp dir (never inside the repo, whose node_modules Node would find
 * by walking up), with `fixture` (a folder of the user's files) copied in, and runs `npm install`.
 */
export async function scratchProject(
  packed: readonly Packed[],
  registryDeps: Readonly<Record<string, string>>,
  fixture: string,
): Promise<Scratch> {
  const dir = mkdtempSync(join(tmpdir(), "attngraph-consumer-"));
  cpSync(fixture, dir, { recursive: true });
  const deps = Object.fromEntries(packed.map((p) => [p.pkg.name, `file:${p.tarball}`]));
  const manifest = {
    name: "attngraph-consumer",
    private: true,
    type: "module",
    dependencies: { ...deps, ...registryDeps },
  };
  writeFileSync(join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  const scratch: Scratch = {
    dir,
    run: (command, args, env = {}) =>
      new Promise((resolve, reject) => {
        execFile(
          command,
          [...args],
          { cwd: dir, encoding: "utf8", maxBuffer: 64 << 20, env: { ...process.env, ...env } },
          (error, stdout, stderr) => {
            const output = `${stdout}${stderr}`;
            if (error)
              reject(
                new Error(`${command} ${args.join(" ")} in ${dir} failed (${error.code ?? error.signal}):\n${output}`),
              );
            else resolve(output);
          },
        );
      }),
  };
  await scratch.run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"]);
  return scratch;
}
