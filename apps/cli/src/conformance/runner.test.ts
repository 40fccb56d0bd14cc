// A case's line says what was compared and what was not: a tensor the tap mode cannot see is named on the line.
import { describe, expect, it } from "vitest";
import type { CaseResult, TensorCheck } from "./run-case.js";
import { formatResult } from "./runner.js";

const check = (name: string, error: number): TensorCheck => ({
  name,
  ok: true,
  failures: 0,
  size: 4,
  worst: { index: 1, got: 0.5, expected: 0.5, error },
});

describe("formatResult", () => {
  it("names the tensors --tap none did not compare on a passing line", () => {
    const r: CaseResult = { file: "a.json", name: "a", ok: true, checks: [check("output", 1e-7)], notCompared: ["scores", "weights"] };
    expect(formatResult(r)).toBe("PASS a  (1 tensors, worst: output 1.00e-7; not compared under --tap none: scores, weights)");
  });

  it("a case that compared nothing is a FAIL line giving the reason", () => {
    const r: CaseResult = { file: "a.json", name: "a", ok: false, checks: [], error: "nothing to compare: not compared under --tap none: weights", notCompared: ["weights"] };
    expect(formatResult(r)).toBe("FAIL a  nothing to compare: not compared under --tap none: weights");
  });

  it("a failing line keeps the note after the mismatches", () => {
    const bad: TensorCheck = { ...check("output", 0.1), ok: false, failures: 1, worst: { index: 2, got: 1, expected: 0.9, error: 0.1 } };
    const r: CaseResult = { file: "a.json", name: "a", ok: false, checks: [bad], notCompared: ["weights"] };
    expect(formatResult(r)).toBe("FAIL a  output: 1 of 4 off, worst at 2: got 1, expected 0.9 (|diff| 1.00e-1); not compared under --tap none: weights");
  });
});
