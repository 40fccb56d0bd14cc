// What a caller hands compile() or run() as an object (the options themselves, updates, overrides) is checked to be
// one before any of it is read: anything else is a GraphValidationError naming the option, not a TypeError inside.
import { GraphValidationError } from "@attngraph/graph";

/** `value` is an object (not null), or a GraphValidationError about `subject` saying what was `expected`. */
export function checkObjectOption(
  value: unknown,
  subject: string,
  what: string,
  expected: string,
): asserts value is object {
  if (typeof value !== "object" || value === null)
    throw new GraphValidationError(subject, what, expected, String(value));
}
