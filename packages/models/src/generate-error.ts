// The errors of generate(): a bad prompt or option (named field, expected, got), raised before any kernel runs, and a
// generation cancelled through its AbortSignal.
import { AttnGraphError, type ErrorCode } from "@attngraph/tensor";

/** A prompt, option or graph that generate() cannot use: `subject` names it; nothing ran. */
export class GenerateError extends AttnGraphError {
  constructor(subject: string, what: string, expected: string, got: string, code: ErrorCode = "generate") {
    super(code, `${subject}: ${what} (expected ${expected}, got ${got})`, { subject, expected, got });
    this.name = "GenerateError";
  }
}

/** The generation's AbortSignal fired. `name` is "AbortError", as fetch() and the runtime's runs use. */
export class GenerateAbortError extends AttnGraphError {
  /** Tokens generated per row before the abort. */
  readonly generated: number;
  constructor(generated: number, cause?: unknown) {
    super("aborted", `generate: aborted after ${generated} new token${generated === 1 ? "" : "s"}`, {
      subject: "generate",
      cause,
    });
    this.name = "AbortError";
    this.generated = generated;
  }
}
