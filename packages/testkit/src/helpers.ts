// Small helpers shared by package tests (`@attngraph/testkit/test-helpers`). Needs vitest (a peer dependency).
import { expect } from "vitest";
import { AttnGraphError } from "@attngraph/tensor";

/** Runs `fn` and returns the subject of the AttnGraphError it throws (failing the test if it throws anything else), or undefined if it returns. */
export const thrownSubject = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (e) {
    expect(AttnGraphError.isInstance(e)).toBe(true);
    return (e as AttnGraphError).subject;
  }
  return undefined;
};
