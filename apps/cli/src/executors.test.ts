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
  it.each(["__proto__", "hasOwnProperty", "valueOf", "constructor", "toString", "cpu,toString"])("%s is an unknown executor", (name) => {
    expect(() => executorsFor(name)).toThrow(UsageError);
    expect(() => executorsFor(name)).toThrow(/^unknown executor "(__proto__|hasOwnProperty|valueOf|constructor|toString)"; available: cpu, wasm, webgpu$/);
  });
});
