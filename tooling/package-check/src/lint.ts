// The two linters a published package must pass, run on the tarball exactly as a user would run them:
// publint --strict (manifest and exports against the files shipped) and attw (types resolve the way the JavaScript
// does). The packages are ESM only, so attw runs with its esm-only profile: `require()` from CommonJS (node16-cjs)
// and the pre-exports node10 resolution are not supported and not checked.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const bin = (name: string) => join(fileURLToPath(new URL("..", import.meta.url)), "node_modules", ".bin", name);

export interface LintResult {
  readonly ok: boolean;
  /** What the tool printed: the reason when it failed. */
  readonly output: string;
}

function run(file: string, args: readonly string[]): Promise<LintResult> {
  return new Promise((resolve) => {
    execFile(
      file,
      [...args],
      { encoding: "utf8", env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" } },
      (error, stdout, stderr) => {
        resolve({ ok: error === null, output: `${stdout}${stderr}`.trim() });
      },
    );
  });
}

export function publint(tarball: string): Promise<LintResult> {
  return run(bin("publint"), ["run", tarball, "--strict"]);
}

export function attw(tarball: string): Promise<LintResult> {
  return run(bin("attw"), [tarball, "--profile", "esm-only", "--format", "ascii", "--no-emoji"]);
}
