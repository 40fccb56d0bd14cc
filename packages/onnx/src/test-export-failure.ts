// How the export tests catch a refused export (tests only): the error must be an OnnxExportError, which they then
// read field by field.
import { thrownError } from "@attngraph/testkit/test-helpers";
import { expect } from "vitest";
import { OnnxExportError } from "./errors.js";

/** Runs `f` and returns the OnnxExportError it throws; fails the test if it throws anything else or nothing. */
export function exportFailure(f: () => unknown): OnnxExportError {
  const e = thrownError(f);
  expect(e).toBeInstanceOf(OnnxExportError);
  return e as OnnxExportError;
}
