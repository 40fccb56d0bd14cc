import { describe, expect, it } from "vitest";
import { outputFailed } from "./io.js";

const systemError = (code: string, message: string) => Object.assign(new Error(message), { code });

describe("outputFailed: an error of stdout", () => {
  it("EPIPE is the reader closing early (`attngraph demo | head`): exit 0, nothing said", () => {
    const err: string[] = [];
    expect(outputFailed(systemError("EPIPE", "write EPIPE"), (l) => err.push(l))).toBe(0);
    expect(err).toEqual([]);
  });

  // It was rethrown from the stream's error handler: a Node stack trace.
  it("a full disk (`> /dev/full`) is one FileError line, exit 1", () => {
    const err: string[] = [];
    expect(outputFailed(systemError("ENOSPC", "ENOSPC: no space left on device, write"), (l) => err.push(l))).toBe(1);
    expect(err).toEqual([
      "attngraph: FileError: stdout: cannot write the file, expected a writable file in an existing folder, got no space left on the device (ENOSPC)",
    ]);
  });
});
