// parseFlexCase: every golden-flex case parses; a malformed one is a CaseFormatError naming the file and the field.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CaseFormatError } from "./errors.js";
import { isFlexCaseJSON, parseFlexCase } from "./flex-case.js";
import { goldenFlexDir } from "./load.js";

const files = readdirSync(goldenFlexDir).filter((f) => f.endsWith(".json"));
const read = (f: string) => JSON.parse(readFileSync(join(goldenFlexDir, f), "utf8")) as Record<string, unknown>;

describe("parseFlexCase", () => {
  it("reads every golden-flex case: heads, scale, expressions, inputs, learnable, gradients", () => {
    expect(files.length).toBeGreaterThanOrEqual(6);
    for (const f of files) {
      const json = read(f);
      expect(isFlexCaseJSON(json), f).toBe(true);
      const c = parseFlexCase(json, f);
      expect(c.inputs["q"]!.shape.length).toBe(4);
      expect(Object.keys(c.expectedGrad).sort()).toEqual(expect.arrayContaining(["k", "q", "v"]));
    }
    const learnable = parseFlexCase(read("flex-relbias-learnable-b1-h2-t8-d8.json"), "x");
    expect(learnable.learnable).toEqual(["bias"]);
    expect(learnable.scale).toBeNull();
  });

  it.each([
    [(j: Record<string, unknown>) => delete j["name"], /\$\.name: missing field/],
    [
      (j: Record<string, unknown>) => ((j["attention"] as Record<string, unknown>)["numKvHeads"] = 3),
      /\$\.attention\.numKvHeads: must divide numHeads/,
    ],
    [
      (j: Record<string, unknown>) => delete (j["inputs"] as Record<string, unknown>)["v"],
      /\$\.inputs\.v: missing field/,
    ],
    [(j: Record<string, unknown>) => (j["learnable"] = ["q"]), /\$\.learnable\[0\]: not a gathered input of the case/],
    [(j: Record<string, unknown>) => delete j["gradOutput"], /\$\.gradOutput: missing field/],
  ])("%s is a CaseFormatError", (edit, message) => {
    const json = read("flex-relbias-learnable-b1-h2-t8-d8.json");
    edit(json);
    expect(() => parseFlexCase(json, "case.json")).toThrow(CaseFormatError);
    expect(() => parseFlexCase(json, "case.json")).toThrow(message);
  });
});
