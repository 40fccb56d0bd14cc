import { ShapeError } from "@attngraph/tensor";
import { mulberry32 } from "@attngraph/testkit";
import { describe, expect, it } from "vitest";
import { UsageError } from "./io.js";
import { checkDimsUsed, parseDims, seededValues } from "./seeded-values.js";

const x = { name: "x", shape: ["B", "T", 4] as (string | number)[] };
const w = { name: "w", shape: [4, 4] };

describe("seededValues", () => {
  it("draws inputs in order, symbolic dims from --dims", () => {
    const v = seededValues("g.json", [x, w], parseDims("B=2,T=3"), mulberry32(0));
    expect(v["x"]!.shape).toEqual([2, 3, 4]);
    expect(v["w"]!.shape).toEqual([4, 4]);
    const first = mulberry32(0)() * 2 - 1;
    expect(v["x"]!.toFloat32Array()[0]).toBeCloseTo(first, 6);
  });

  // It drew 16 GB of random numbers (3 minutes) before the runtime refused the run, or crashed past 2^32 elements.
  it("refuses values past the runtime's memory limit before allocating any, naming the largest", () => {
    const huge = () => seededValues("g.json", [x, w], parseDims("B=1,T=1000000000"), mulberry32(0));
    expect(huge).toThrow(ShapeError);
    expect(huge).toThrow(
      "g.json: x [1, 1000000000, 4]: too large to fill with random values, expected at most 4 GiB of float32 values in all (the runtime's memory limit; give smaller --dims), got 14.9 GiB",
    );
    expect(() => seededValues("g.json", [x], parseDims("B=2,T=1000000000"), mulberry32(0))).toThrow(/got 29\.8 GiB$/);
    // Counted together: two values each under the limit.
    const half = { name: "h", shape: [1024, 1024, 1024] };
    expect(() => seededValues("g.json", [half, { ...half, name: "k" }], new Map(), mulberry32(0))).toThrow(
      /h \[1024, 1024, 1024\]: too large .*memory limit\), got 8\.0 GiB$/,
    );
  });

  it("a symbolic dim without a size names the flag", () => {
    expect(() => seededValues("g.json", [x], parseDims("B=2"), mulberry32(0))).toThrow(
      new UsageError("g.json: x has the symbolic dim T: give its size with --dims T=<n>"),
    );
  });
});

describe("parseDims", () => {
  it("reads name=size pairs", () => {
    expect([...parseDims(" B = 2,T=8")]).toEqual([
      ["B", 2],
      ["T", 8],
    ]);
  });

  it.each(["B", "B=0", "B=-1", "B=1.5", "B=99999999999999999999"])("refuses %s", (text) => {
    expect(() => parseDims(text)).toThrow(/^--dims: expected name=size pairs like B=2,T=8/);
  });

  it("refuses a dim given twice (the last one won, silently)", () => {
    expect(() => parseDims("B=1,T=2,B=3")).toThrow(new UsageError("--dims: B is given twice"));
  });
});

describe("checkDimsUsed", () => {
  it("refuses a dim that sizes nothing, naming the dims there are", () => {
    expect(() => checkDimsUsed("g.json", parseDims("B=1,T=2"), [x, w], "input or weight")).not.toThrow();
    expect(() => checkDimsUsed("g.json", parseDims("B=1,Q=2"), [x, w], "input or weight")).toThrow(
      new UsageError("--dims Q: no input or weight of g.json has this symbolic dim (theirs: B, T)"),
    );
    expect(() => checkDimsUsed("g.json", parseDims("B=1"), [w], "weight")).toThrow(
      /--dims B: no weight of g\.json has this symbolic dim \(theirs: none\)/,
    );
  });
});
