// A graph document from outside (a file, a network message) is untrusted: whatever it holds, fromJSON returns a graph or
// throws a typed error (GraphFormatError naming the JSON path, GraphValidationError naming the node), and a graph it
// returns compiles or fails to compile with a typed error. Never a TypeError, a RangeError or a hang.
import { buildAttention } from "@attngraph/attention";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { fromJSON, GraphFormatError, GraphValidationError, toJSON } from "@attngraph/graph";
import { compile } from "@attngraph/runtime";
import { AttnGraphError } from "@attngraph/tensor";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fcSettings } from "./settings.js";

const valid = () =>
  JSON.parse(
    JSON.stringify(toJSON(buildAttention({ dIn: 8, dOut: 8, numHeads: 2, causal: true, qkvBias: true }))),
  ) as Record<string, unknown>;

/** What reading `doc` did: "ok", or the error's class and code. Anything that is not an AttnGraphError fails. */
function outcome(doc: unknown, budgetMs = 5_000): string {
  const t0 = performance.now();
  try {
    fromJSON(doc);
    return "ok";
  } catch (e) {
    if (!AttnGraphError.isInstance(e))
      throw new Error(`fromJSON threw a non-attngraph error: ${String(e)}`, { cause: e });
    if (e.message.length > 600)
      throw new Error(`error message of ${e.message.length} characters: ${e.message.slice(0, 200)}...`);
    return `${e.name}:${e.code}`;
  } finally {
    const ms = performance.now() - t0;
    // biome-ignore lint/correctness/noUnsafeFinally: over budget fails the case whatever it returned
    if (ms > budgetMs) throw new Error(`fromJSON took ${ms.toFixed(0)} ms, over ${budgetMs} ms`);
  }
}

/** Every path to a value inside a document, as key lists. */
function paths(v: unknown, at: (string | number)[] = []): (string | number)[][] {
  const out = [at];
  if (Array.isArray(v)) v.forEach((x, i) => out.push(...paths(x, [...at, i])));
  else if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) out.push(...paths(x, [...at, k]));
  return out;
}

/** A value fromJSON could meet in a hostile document, NaN, -0, huge numbers, odd strings and prototypes included. */
const hostileValue = fc.oneof(
  fc.jsonValue(),
  fc.constantFrom(
    NaN,
    Infinity,
    -0,
    1e308,
    -1,
    1.5,
    2 ** 53,
    "",
    "__proto__",
    "constructor",
    null,
    undefined,
    [],
    {},
    [[[[]]]],
    "x".repeat(10_000),
  ),
  fc.string(),
);

describe("graph JSON from outside", () => {
  it("a valid attention graph document with one field replaced, removed or duplicated: a graph or a typed error", async () => {
    const base = valid();
    const all = paths(base).filter((p) => p.length > 0);
    await fc.assert(
      fc.asyncProperty(
        fc.nat(all.length - 1),
        fc.constantFrom("replace", "delete", "duplicate"),
        hostileValue,
        async (i, op, value) => {
          const doc = valid();
          const path = all[i]!;
          const parent = path.slice(0, -1).reduce<any>((o, k) => o[k as keyof typeof o], doc);
          const key = path.at(-1)!;
          if (op === "replace") parent[key] = value;
          else if (op === "delete") Array.isArray(parent) ? parent.splice(key as number, 1) : delete parent[key];
          else if (Array.isArray(parent)) parent.push(structuredClone(parent[key as number]));
          else parent[`${String(key)}2`] = value;
          const result = outcome(doc);
          if (result === "ok") {
            // It read as a graph: it must compile, or fail to with a typed error (missing weights, say).
            const g = fromJSON(doc);
            await compile(g, { executors: [createCpuExecutor()] }).catch((e: unknown) => {
              if (!AttnGraphError.isInstance(e)) throw e;
            });
          }
        },
      ),
      fcSettings(400),
    );
  });

  it("arbitrary values and strings (JSON or not) are typed errors", () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.string(), fc.json(), fc.string({ unit: "binary" })), (v) => {
        expect(outcome(v)).not.toBe("ok");
      }),
      fcSettings(500),
    );
  });

  it("wrong types, unknown versions and duplicate node names each name what is wrong", () => {
    const wrongType = valid();
    (wrongType.nodes as any[])[3].attrs = "causal";
    expect(() => fromJSON(wrongType)).toThrow(GraphFormatError);
    expect(() => fromJSON(wrongType)).toThrow(/^\$\.nodes\[3\]\.attrs: wrong type, expected an object, got "causal"/);
    const dims = valid();
    (dims.inputs as any[])[0].shape[2] = 8.5;
    expect(() => fromJSON(dims)).toThrow(/^\$\.inputs\[0\]\.shape\[2\]: invalid dim/);
    for (const version of [0, 3, "1", null, 1.0000001]) {
      expect(() => fromJSON({ ...valid(), version })).toThrow(/^\$\.version: unknown format version, expected 1 or 2/);
    }
    const dup = valid();
    (dup.nodes as any[]).push({ ...(dup.nodes as any[])[0] });
    expect(() => fromJSON(dup)).toThrow(GraphValidationError);
    expect(outcome(dup)).toBe("GraphValidationError:duplicate-name");
  });

  // Alone, the slowest (5M-deep nesting, inside JSON.parse) takes about 1.6 s on the 2-core machine; the budget of 20 s
  // leaves room for a loaded CI machine and still catches a hang or anything quadratic in the size.
  it("10 MB of garbage of five kinds: typed errors, each within 20 s, with a short message", {
    timeout: 120_000,
  }, () => {
    const MB10 = 10 * 1024 * 1024;
    let seed = 1;
    const raw = new Uint8Array(MB10).map(() => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 24);
    const bytes = new TextDecoder("latin1").decode(raw);
    const garbage: [string, unknown][] = [
      ["random bytes", bytes],
      ["10M open brackets", "[".repeat(MB10)],
      ["deeply nested arrays, closed", `${"[".repeat(MB10 / 2)}${"]".repeat(MB10 / 2)}`],
      [
        "a valid document with a 10 MB node name",
        JSON.stringify({
          ...valid(),
          nodes: [{ name: "n".repeat(MB10), kind: "softmax", inputs: { x: "x" }, attrs: {} }],
        }),
      ],
      [
        "a valid header with 10 MB of nodes that are numbers",
        `{"format":"attngraph.graph","version":1,"inputs":[],"weights":[],"outputs":[],"nodes":[${"1,".repeat(MB10 / 2)}1]}`,
      ],
    ];
    for (const [what, doc] of garbage) {
      expect(outcome(doc, 20_000), what).toMatch(/^Graph(Format|Validation)Error:/);
    }
  });
});
