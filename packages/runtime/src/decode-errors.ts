// The decoder's errors: a decode graph or call it cannot serve (DecodeError), and a step past the cache's length
// (CacheOverflowError). Both are exported by the package.
import { AttnGraphError, type ErrorCode } from "@attngraph/tensor";

/** A decode graph or call the decoder cannot serve: named subject, what was expected and what came. */
export class DecodeError extends AttnGraphError {
  constructor(subject: string, what: string, expected: string, got: string, code: ErrorCode = "decode") {
    super(code, `${subject}: ${what} (expected ${expected}, got ${got})`, { subject, expected, got });
    this.name = "DecodeError";
  }
}

/** More positions than the cache holds. `subject` names the cache; nothing ran, and the cache is as it was. */
export class CacheOverflowError extends DecodeError {
  constructor(cache: string, past: number, added: number, maxLength: number, ring = false) {
    super(
      cache,
      ring
        ? `${added} new position${added === 1 ? "" : "s"} after the ${past} a window keeps do not fit in the cache: step fewer tokens at once, or compile with a larger maxLength`
        : `${added} new position${added === 1 ? "" : "s"} after ${past} do not fit in the cache: reset(), truncate(n), or compile with a larger maxLength`,
      `past + new <= ${maxLength}`,
      `${past} + ${added} = ${past + added}`,
      "cache-overflow",
    );
    this.name = "CacheOverflowError";
  }
}
