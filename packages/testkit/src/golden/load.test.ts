// The loader's promise: every golden file parses, and every malformed case is a CaseFormatError that names the file
// and the field (with what was expected and what came), never a TypeError from deep inside.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseCase } from "./case.js";
import { CaseFormatError } from "./errors.js";
import { goldenDir, goldenGradDir, listCases, loadCase } from "./load.js";

type Json = any; // mutable JSON for building broken cases

const BASE = "mha-causal-outproj-b2-t6-d8-h2.json";
const base = (): Json => JSON.parse(readFileSync(join(goldenDir, BASE), "utf8"));
const keyPaddingBase = (): Json => JSON.parse(readFileSync(join(goldenDir, "key-padding-b3-t6-d8-h2.json"), "utf8"));

/** Runs `fn`, which must throw a CaseFormatError whose message starts with the file and contains every fragment. */
function caseError(fn: () => unknown, file: string, ...fragments: string[]): CaseFormatError {
  let error: unknown;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  expect(error, "expected a CaseFormatError, nothing was thrown").toBeDefined();
  expect(CaseFormatError.isInstance(error), `expected a CaseFormatError, got ${String(error)}`).toBe(true);
  const e = error as CaseFormatError;
  expect(e.code).toBe("case-format");
  expect(e.message.startsWith(`${file}: `), e.message).toBe(true);
  for (const f of fragments) expect(e.message).toContain(f);
  expect(e.message.length).toBeLessThan(400);
  return e;
}

describe("goldenDir and listCases", () => {
  it("goldenDir is this package's golden folder", () => {
    expect(listCases(goldenDir).map((f) => f.slice(goldenDir.length + 1))).toContain(BASE);
    expect(readFileSync(join(goldenDir, "FORMAT.md"), "utf8")).toContain("# Golden attention cases");
  });

  it("lists only *.json, sorted, joined onto the folder", () => {
    const dir = mkdtempSync(join(tmpdir(), "testkit-list-"));
    for (const n of ["b.json", "a.json", "notes.txt", "c.json.bak"]) writeFileSync(join(dir, n), "{}");
    mkdirSync(join(dir, "sub"));
    expect(listCases(dir)).toEqual([join(dir, "a.json"), join(dir, "b.json")]);
  });

  it("a missing folder is a CaseFormatError naming it", () => {
    const dir = join(tmpdir(), "testkit-no-such-folder-0x5eed");
    caseError(() => listCases(dir), dir, "cannot list the case folder", "ENOENT");
  });
});

describe("every golden file parses", () => {
  it.each(listCases(goldenDir).map((f) => [f.slice(goldenDir.length + 1), f]))("%s", (_name, file) => {
    const c = loadCase(file);
    expect(c.file).toBe(file);
    expect(c.name.length).toBeGreaterThan(0);
    expect(c.weights.W_query?.shape).toEqual([c.config.dOut, c.config.dIn]);
    expect(c.inputs.x?.shape[2]).toBe(c.config.dIn);
    expect(c.tolerance.abs).toBeGreaterThan(0);
    // Tensors carry the file's numbers (as float32).
    const raw = JSON.parse(readFileSync(file, "utf8"));
    expect(c.expected.output?.toArray()).toEqual(raw.expected.output.data.map(Math.fround));
  });
});

describe("malformed cases give a CaseFormatError naming the file and field", () => {
  const broken: [string, (j: Json) => unknown, string[]][] = [
    ["missing name", (j) => delete j.name, ["$.name: missing field"]],
    ["name of the wrong type", (j) => (j.name = 5), ["$.name: wrong type, expected a string, got 5"]],
    ["missing source", (j) => delete j.source, ["$.source: missing field"]],
    ["missing config", (j) => delete j.config, ["$.config: missing field"]],
    [
      "config not an object",
      (j) => (j.config = [1, 2]),
      ["$.config: wrong type, expected an object, got an array of 2"],
    ],
    [
      "numHeads not dividing dOut",
      (j) => (j.config.numHeads = 3),
      ["$.config.dOut: dOut must be divisible by numHeads, expected a multiple of 3, got 8"],
    ],
    ["config flag of the wrong type", (j) => (j.config.causal = "yes"), ["$.config.causal:", 'got "yes"']],
    ["unknown config key", (j) => (j.config.heads = 2), ["$.config.heads: unknown key"]],
    // caseError also holds the message under 400 characters: a 4 MB value is quoted cut short ("…").
    [
      "a 4 MB config value",
      (j) => (j.config.causal = "y".repeat(4_000_000)),
      ["$.config.causal: invalid value, expected true or false", 'got "yyy', "…", 'yyy"'],
    ],
    [
      "a 4 MB unknown config key",
      (j) => (j.config["k".repeat(4_000_000)] = 1),
      ['$.config["kkk', "…", ": unknown key"],
    ],
    [
      "a 4 MB unknown tensor name",
      (j) => (j.expected["w".repeat(4_000_000)] = j.expected.weights),
      ["$.expected.www", "…", "unknown tensor name"],
    ],
    ["numKvHeads not dividing numHeads", (j) => (j.config.numKvHeads = 3), ["$.config.numKvHeads:", "got 3"]],
    [
      "window without causal",
      (j) => Object.assign(j.config, { causal: false, window: 2 }),
      ["$.config.window: a sliding window needs causal"],
    ],
    [
      "dropout in a golden case",
      (j) => (j.config.dropout = 0.1),
      ["$.config.dropout: golden cases are inference, expected 0, got 0.1"],
    ],
    [
      "wrong data length",
      (j) => j.weights.W_query.data.pop(),
      ["$.weights.W_query.data: wrong length, expected 64 values for [8, 8], got 63"],
    ],
    [
      "NaN as a string",
      (j) => (j.weights.W_query.data[3] = "NaN"),
      ['$.weights.W_query.data[3]: not a finite number, expected a finite number, got "NaN"'],
    ],
    [
      "Infinity as a string",
      (j) => (j.inputs.x.data[0] = "-Infinity"),
      ["$.inputs.x.data[0]: not a finite number", '"-Infinity"'],
    ],
    [
      "null in data",
      (j) => (j.expected.scores.data[7] = null),
      ["$.expected.scores.data[7]: not a finite number", "got null"],
    ],
    ["number as a string", (j) => (j.weights.out_bias.data[1] = "0.5"), ["$.weights.out_bias.data[1]:", '"0.5"']],
    [
      "a value beyond float32 (Infinity once loaded)",
      (j) => (j.inputs.x.data[5] = 1e39),
      ["$.inputs.x.data[5]: outside the float32 range, expected |v| <= 3.4028234663852886e+38, got 1e+39"],
    ],
    [
      "a negative value beyond float32",
      (j) => (j.weights.W_key.data[0] = -3.5e38),
      ["$.weights.W_key.data[0]: outside the float32 range", "got -3.5e+38"],
    ],
    [
      "an expected value beyond float32",
      (j) => (j.expected.output.data[2] = 1e300),
      ["$.expected.output.data[2]: outside the float32 range"],
    ],
    [
      "nested data",
      (j) => (j.weights.out_bias.data = [j.weights.out_bias.data]),
      ["$.weights.out_bias.data: wrong length, expected 8 values for [8], got 1"],
    ],
    ["shape missing", (j) => delete j.weights.W_key.shape, ["$.weights.W_key.shape: missing field"]],
    [
      "shape entry a string",
      (j) => (j.weights.W_key.shape = [8, "8"]),
      ['$.weights.W_key.shape[1]: invalid dim, expected an integer >= 0, got "8"'],
    ],
    ["negative dim", (j) => (j.weights.W_key.shape = [-8, -8]), ["$.weights.W_key.shape[0]: invalid dim", "got -8"]],
    ["fractional dim", (j) => (j.weights.W_key.shape = [4.5, 8]), ["$.weights.W_key.shape[0]: invalid dim", "got 4.5"]],
    [
      "tensor not an object",
      (j) => (j.weights.W_value = [1, 2]),
      ["$.weights.W_value: wrong type, expected an object"],
    ],
    [
      "data not an array",
      (j) => (j.weights.W_value.data = "0.1 0.2"),
      ["$.weights.W_value.data: wrong type, expected an array of numbers"],
    ],
    ["weights not an object", (j) => (j.weights = null), ["$.weights: wrong type, expected an object, got null"]],
    ["missing expected", (j) => delete j.expected, ["$.expected: missing field"]],
    [
      "weight shape against the config",
      (j) => (j.weights.W_key = { shape: [4, 16], data: new Array(64).fill(0) }),
      ["$.weights.W_key.shape: shape does not match the config, expected [8, 8]", "got [4, 16]"],
    ],
    [
      "missing out_proj with outProj",
      (j) => delete j.weights.out_proj,
      ["$.weights.out_proj: missing (config.outProj is true)", "absent"],
    ],
    [
      "bias without qkvBias",
      (j) => (j.weights.b_query = { shape: [8], data: new Array(8).fill(0) }),
      ["$.weights.b_query: not allowed (config.qkvBias is false)"],
    ],
    [
      "typo in an expected name",
      (j) => (j.expected.wieghts = j.expected.weights),
      ["$.expected.wieghts: unknown tensor name", 'got "wieghts"'],
    ],
    [
      "a name that needs quoting",
      (j) => (j.weights["W query"] = j.weights.W_query),
      ['$.weights["W query"]: unknown tensor name'],
    ],
    ["missing x", (j) => delete j.inputs.x, ["$.inputs.x: missing input"]],
    [
      "x against dIn",
      (j) => (j.inputs.x = { shape: [2, 12, 4], data: j.inputs.x.data }),
      ["$.inputs.x.shape: shape does not match the config", "got [2, 12, 4]"],
    ],
    [
      "expected shape",
      (j) => (j.expected.scores.shape = [2, 2, 3, 12]),
      ["$.expected.scores.shape: shape does not match the config, expected [2, 2, 6, 6]"],
    ],
    ["kv without cross", (j) => (j.inputs.kv = j.inputs.x), ["$.inputs.kv: not allowed (config.cross is false)"]],
    [
      "negative tolerance",
      (j) => (j.tolerance.abs = -1e-4),
      ["$.tolerance.abs: out of range, expected >= 0, got -0.0001"],
    ],
    [
      "tolerance as a string",
      (j) => (j.tolerance.rel = "1e-4"),
      ['$.tolerance.rel: wrong type, expected a finite number, got "1e-4"'],
    ],
    ["missing tolerance", (j) => delete j.tolerance, ["$.tolerance: missing field"]],
    [
      "tolerance.abs too loose to prove anything",
      (j) => (j.tolerance.abs = 0.5),
      ["$.tolerance.abs: out of range, expected <= 0.05, got 0.5"],
    ],
    [
      "tolerance.rel too loose to prove anything",
      (j) => (j.tolerance.rel = 1e4),
      ["$.tolerance.rel: out of range, expected <= 0.05, got 10000"],
    ],
  ];

  it.each(broken)("%s", (_what, breakIt, fragments) => {
    const j = base();
    breakIt(j);
    caseError(() => parseCase(j, "bad.json"), "bad.json", ...fragments);
  });

  // JSON.parse makes "__proto__" an own key (defineProperty does the same here); it must not vanish into the prototype.
  it.each(["weights", "inputs", "expected"])('a "__proto__" entry in %s is an unknown tensor name', (key) => {
    const j = base();
    Object.defineProperty(j[key], "__proto__", {
      value: j.weights.W_query,
      enumerable: true,
      configurable: true,
      writable: true,
    });
    caseError(
      () => parseCase(j, "proto.json"),
      "proto.json",
      `$.${key}.__proto__: unknown tensor name`,
      'got "__proto__"',
    );
  });

  it('a "__proto__" entry read from a file is rejected too', () => {
    const text = JSON.stringify(base()).replace('"expected":{', '"expected":{"__proto__":{"shape":[1],"data":[0]},');
    caseError(
      () => parseCase(JSON.parse(text), "proto.json"),
      "proto.json",
      "$.expected.__proto__: unknown tensor name",
    );
  });

  it("the largest float32 is accepted", () => {
    const j = base();
    j.inputs.x.data[0] = 3.4028234663852886e38;
    j.inputs.x.data[1] = -3.4028234663852886e38;
    expect(parseCase(j, "big.json").inputs.x!.toArray().slice(0, 2)).toEqual([
      3.4028234663852886e38, -3.4028234663852886e38,
    ]);
  });

  it("a tolerance at the bound is accepted", () => {
    const j = base();
    j.tolerance = { abs: 0.05, rel: 0.05 };
    expect(parseCase(j, "loose.json").tolerance).toEqual({ abs: 0.05, rel: 0.05 });
  });

  it("a config error keeps the ConfigError as its cause", () => {
    const j = base();
    j.config.numHeads = 3;
    const e = caseError(() => parseCase(j, "bad.json"), "bad.json");
    expect((e.cause as { code?: string }).code).toBe("config");
  });

  it("cross without kv", () => {
    const j = base();
    Object.assign(j.config, { causal: false, cross: true });
    caseError(() => parseCase(j, "bad.json"), "bad.json", "$.inputs.kv: missing (config.cross is true)");
  });

  it("a padding flag other than 0 or 1", () => {
    const j = keyPaddingBase();
    j.inputs.keyPaddingMask.data[4] = 2;
    caseError(
      () => parseCase(j, "pad.json"),
      "pad.json",
      "$.inputs.keyPaddingMask.data[4]: invalid padding flag",
      "got 2",
    );
  });

  it.each([
    ["null", null, "got null"],
    ["an array", [], "got an array of 0"],
    ["a number", 42, "got 42"],
    ["a 10 MB string", "garbage ".repeat(1_310_720), "got a string of 10485760 characters"],
  ])("a whole case that is %s", (_what, json, got) => {
    caseError(() => parseCase(json, "odd.json"), "odd.json", "$: wrong type, expected an object", got);
  });

  // Every field of the base case replaced by every kind of wrong value, or deleted: the answer is a parsed case or a
  // CaseFormatError, never anything else.
  it("any field replaced by any JSON value never gives a raw error", () => {
    const paths: (string | number)[][] = [];
    const walk = (v: Json, at: (string | number)[]): void => {
      paths.push(at);
      if (typeof v !== "object" || v === null) return;
      const keys = Array.isArray(v) ? (v.length ? [0, v.length - 1] : []) : Object.keys(v);
      for (const k of keys) walk(v[k], [...at, k]);
    };
    walk(base(), []);
    const values: Json[] = [undefined, null, true, 0, -1, 1.5, "", "x", [], [1], {}, { shape: [], data: [] }];
    let errors = 0;
    for (const path of paths.slice(1)) {
      for (const value of values) {
        const j = base();
        let parent = j;
        for (const k of path.slice(0, -1)) parent = parent[k];
        if (value === undefined) delete parent[path.at(-1)!];
        else parent[path.at(-1)!] = value;
        try {
          parseCase(j, "fuzz.json");
        } catch (e) {
          errors++;
          if (!CaseFormatError.isInstance(e))
            throw new Error(`${path.join(".")} = ${JSON.stringify(value)} gave ${String(e)}`);
          expect((e as Error).message.startsWith("fuzz.json: $")).toBe(true);
        }
      }
    }
    expect(errors).toBeGreaterThan(paths.length); // most replacements must be rejected
  });
});

describe("loadCase", () => {
  const dir = mkdtempSync(join(tmpdir(), "testkit-load-"));
  const file = (name: string, text: string): string => {
    const p = join(dir, name);
    writeFileSync(p, text);
    return p;
  };

  it("reads and parses a file, naming it in the case", () => {
    const p = file("good.json", readFileSync(join(goldenDir, BASE), "utf8"));
    expect(loadCase(p).file).toBe(p);
  });

  it("invalid JSON names the file", () => {
    const p = file("truncated.json", '{"name": "x", "source": ');
    caseError(() => loadCase(p), p, "invalid JSON, expected a JSON document, got");
  });

  it("10 MB of garbage names the file and stays short", () => {
    const p = file("garbage.json", "\u0000garbage{[".repeat(1_048_576));
    const e = caseError(() => loadCase(p), p, "invalid JSON");
    // biome-ignore lint/suspicious/noControlCharactersInRegex: no control character may reach the message
    expect(e.message).not.toMatch(/[\u0000-\u001f]/); // the file's bytes are quoted escaped
  });

  it("a missing file names the file", () => {
    const p = join(dir, "missing.json");
    caseError(() => loadCase(p), p, "cannot read the file", "ENOENT");
  });

  it("a folder instead of a file", () => {
    caseError(() => loadCase(dir), dir, "cannot read the file");
  });

  it("a field error names the file as given", () => {
    const j = base();
    j.weights.W_query.data.pop();
    const p = file("short.json", JSON.stringify(j));
    caseError(() => loadCase(p), p, "$.weights.W_query.data: wrong length, expected 64 values for [8, 8], got 63");
  });
});

describe("golden-grad cases (shared/golden-grad)", () => {
  const grad = (): Json => JSON.parse(readFileSync(join(goldenGradDir, "qkv-bias-b2-t5-d12-h3-grad.json"), "utf8"));

  it("every file parses: gradOutput kept apart from the forward inputs, every gradient by the name of its tensor", () => {
    for (const file of listCases(goldenGradDir)) {
      const c = loadCase(file);
      expect(Object.keys(c.inputs)).not.toContain("gradOutput");
      expect(c.gradOutput!.shape).toEqual(c.expected["output"]!.shape);
      expect(Object.keys(c.expectedGrad).length).toBeGreaterThan(0);
      for (const [n, g] of Object.entries(c.expectedGrad))
        expect(g.shape, n).toEqual((c.weights[n] ?? c.inputs[n])!.shape);
    }
    const plain = loadCase(join(goldenDir, BASE));
    expect([plain.gradOutput, plain.expectedGrad]).toEqual([undefined, {}]);
  });

  it("a gradient of a tensor the case does not have, of the wrong shape, or without gradOutput is a format error", () => {
    const unknown = grad();
    unknown.expectedGrad.W_kv = unknown.expectedGrad.W_key;
    caseError(() => parseCase(unknown, "g.json"), "g.json", "$.expectedGrad.W_kv", "unknown tensor name");
    const shape = grad();
    shape.expectedGrad.x = shape.expectedGrad.W_query;
    caseError(() => parseCase(shape, "g.json"), "g.json", "$.expectedGrad.x.shape");
    const noCotangent = grad();
    delete noCotangent.inputs.gradOutput;
    caseError(() => parseCase(noCotangent, "g.json"), "g.json", "$.inputs.gradOutput", "expectedGrad needs it");
  });
});
