import { describe, expect, it } from "vitest";
import { executorsFor } from "./executors.js";
import { UsageError } from "./io.js";

describe("executorsFor", () => {
  it("gives the executors of a comma list in its order", () => {
    expect(executorsFor("cpu, wasm").map((e) => e.name)).toEqual(["cpu", "wasm"]);
  });

  it("gives --threads to the wasm executor", () => {
    const [wasm] = executorsFor("wasm", undefined, { threads: 3 }) as unknown as [{ threading: { requested: number } }];
    expect(wasm.threading.requested).toBe(3);
  });

  // Names that Object.prototype holds: looked up in a plain object they crashed or came back as non-executors.
  it.each(["__proto__", "hasOwnProperty", "valueOf", "constructor", "toString", "cpu,toString"])(
    "%s is an unknown executor",
    (name) => {
      expect(() => executorsFor(name)).toThrow(UsageError);
      expect(() => executorsFor(name)).toThrow(
        /^unknown executor "(__proto__|hasOwnProperty|valueOf|constructor|toString)"; available: cpu, wasm, webgpu$/,
      );
    },
  );

  // The other executors run on one thread: --threads 4 with cpu ran on one without a word.
  it("refuses --threads when no executor is wasm", () => {
    expect(() => executorsFor("cpu", undefined, { threads: 4 })).toThrow(
      new UsageError(
        "--threads sets the wasm executor's threads, and the executors are cpu: add wasm or leave --threads out",
      ),
    );
    expect(executorsFor("cpu,wasm", undefined, { threads: 2 }).map((e) => e.name)).toEqual(["cpu", "wasm"]);
  });
});
