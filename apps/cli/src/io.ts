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
