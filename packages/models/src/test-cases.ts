// The golden-models cases as tests read them: the case's inputs and expected values, and its weights' bytes.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { goldenModelsDir, goldenModelsExtraDir, parseModelCase, type ModelCase } from "@attngraph/testkit";

export function modelCase(name: string): ModelCase & { bytes: Uint8Array } {
  for (const dir of [goldenModelsDir, goldenModelsExtraDir]) {
    const file = join(dir, `${name}.json`);
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    const c = parseModelCase(JSON.parse(text), file);
    return { ...c, bytes: new Uint8Array(readFileSync(join(dir, c.weights))) };
  }
  throw new Error(`no golden-models case ${name}`);
}

/** Every case name of both folders. */
export function modelCaseNames(): string[] {
  return [goldenModelsDir, goldenModelsExtraDir].flatMap((d) =>
    readdirSync(d)
      .filter((f) => f.endsWith(".json"))
      .map((f) => f.slice(0, -5)),
  );
}

/** max |a − b| over two equally long arrays. */
export function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}
