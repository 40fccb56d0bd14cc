import { toFileError } from "./files.js";

/** Where a command writes: stdout/stderr in the CLI, arrays in tests. */
export interface IO {
  out(line: string): void;
  err(line: string): void;
}

export const processIO: IO = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

/** A usage mistake: printed without a stack trace, exit status 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/**
 * The exit status for an error of stdout: EPIPE is the reader closing early (`attngraph demo | head`), its choice, 0;
 * anything else (`attngraph demo > /dev/full`) is one FileError line on `err`, 1, never a stack trace.
 */
export function outputFailed(e: unknown, err: (line: string) => void): number {
  if ((e as { code?: unknown } | null)?.code === "EPIPE") return 0;
  const failure = toFileError("stdout", "write", e);
  err(`attngraph: ${failure ? `${failure.name}: ${failure.message}` : String(e)}`);
  return 1;
}
