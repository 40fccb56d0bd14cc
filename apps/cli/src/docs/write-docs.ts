// `pnpm gen:docs`: regenerates the generated pages under docs/.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { renderCookbook } from "./cookbook.js";
import { renderSupportMatrix } from "./support-matrix.js";

export const generatedDocs: Record<string, () => string> = {
  "cookbook.md": renderCookbook,
  "support-matrix.md": renderSupportMatrix,
};

export function writeDocs(docsDir: string): string[] {
  return Object.entries(generatedDocs).map(([file, render]) => {
    const path = join(docsDir, file);
    writeFileSync(path, render());
    return path;
  });
}
