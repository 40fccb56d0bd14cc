import { CaseFormatError, goldenDir, goldenTrainDir } from "@attngraph/testkit";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { caseOf, expectKind, readDocument } from "./document.js";
import { UsageError } from "./io.js";

const tmp = () => mkdtempSync(join(tmpdir(), "attngraph-doc-"));

describe("readDocument", () => {
  it("tells a golden case, a graph document and a repro apart by their format", () => {
    const dir = tmp();
    writeFileSync(join(dir, "g.json"), JSON.stringify({ format: "attngraph.graph", version: 1 }));
    writeFileSync(join(dir, "r.json"), JSON.stringify({ format: "attngraph.repro", version: 1 }));
    expect(readDocument(join(dir, "g.json")).kind).toBe("graph");
    expect(readDocument(join(dir, "r.json")).kind).toBe("repro");
    const doc = readDocument(join(goldenDir, "t1-causal-b2-d8-h2.json"));
    expect(doc.kind).toBe("case");
    expect(caseOf(doc)).toMatchObject({ format: "attention", case: { name: "t1-causal-b2-d8-h2" } });
    expect(caseOf(readDocument(join(goldenTrainDir, "block-causal-b2-t10-e16-h4.json"))).format).toBe("train");
  });

  it("a file that is not JSON is a CaseFormatError naming it", () => {
    const path = join(tmp(), "torn.json");
    writeFileSync(path, "x\u0001y"); // JSON.parse quotes the text: the control character comes out escaped
    expect(() => readDocument(path)).toThrow(CaseFormatError);
    expect(() => readDocument(path)).toThrow(/torn\.json: invalid JSON, expected a JSON document, got .*\\u0001/);
  });
});

describe("expectKind", () => {
  it("names what was given, what was expected, and which commands take it", () => {
    const path = join(tmp(), "graph.json");
    writeFileSync(path, JSON.stringify({ format: "attngraph.graph", version: 1 }));
    const doc = readDocument(path);
    expect(() => expectKind(doc, "run", ["case", "repro"])).toThrow(UsageError);
    expect(() => expectKind(doc, "run", ["case", "repro"])).toThrow(
      `run: ${path} is a graph document, expected a golden case or a repro; a graph document goes to attngraph diff (with --dims) or attngraph export`,
    );
    expect(() => expectKind(doc, "export", ["case", "graph"])).not.toThrow();
  });
});
