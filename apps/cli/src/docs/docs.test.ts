import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { generatedDocs } from "./write-docs.js";

const docsDir = join(dirname(fileURLToPath(import.meta.url)), "../../../../docs");

describe("generated docs", () => {
  for (const [file, render] of Object.entries(generatedDocs)) {
    it(`docs/${file} is up to date (run \`pnpm gen:docs\` to regenerate)`, () => {
      expect(readFileSync(join(docsDir, file), "utf8")).toBe(render());
    });
  }
});
