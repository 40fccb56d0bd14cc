// writeSafetensors refuses what no valid file can hold, with the reader's rules, before writing a byte: what it does
// write, readSafetensors reads back (the round trips of real checkpoints: safetensors.test.ts).
import { AttnGraphError, Tensor, type AnyTensor } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { SafetensorsError, readSafetensors } from "./safetensors.js";
import { writeSafetensors } from "./safetensors-write.js";

const w = Tensor.from([1, 2], [2]);

function failure(f: () => unknown): SafetensorsError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(SafetensorsError);
    expect(AttnGraphError.isInstance(e)).toBe(true);
    return e as SafetensorsError;
  }
  throw new Error("writeSafetensors wrote it");
}

describe("writeSafetensors", () => {
  const refused: [string, () => unknown, string, RegExp][] = [
    [
      "a { shape, data } object",
      () => writeSafetensors({ a: { shape: [2], data: [1, 2] } } as never),
      "tensor a",
      /not a tensor, expected a Tensor .*got \{ shape, data \} \(Tensor\.from\(data, shape\) makes it one\)/,
    ],
    [
      "a number where a tensor belongs",
      () => writeSafetensors(new Map([["a", 5]]) as never),
      "tensor a",
      /not a tensor.*got number 5/,
    ],
    [
      "null tensors",
      () => writeSafetensors(null as never),
      "writeSafetensors tensors",
      /tensors must be given by name, expected an object or Map of Tensors by name, got null/,
    ],
    ["an array of tensors", () => writeSafetensors([w] as never), "writeSafetensors tensors", /got an array/],
    [
      "a Map with a number key",
      () => writeSafetensors(new Map([[1, w]]) as never),
      "writeSafetensors tensors",
      /names must be strings.*got number 1/,
    ],
    [
      "a tensor named __metadata__",
      () => writeSafetensors({ __metadata__: w }),
      "tensor __metadata__",
      /reserves this name for the file's metadata/,
    ],
    [
      "a name with a lone surrogate",
      () => writeSafetensors({ ["w\ud800"]: w }),
      "writeSafetensors tensors name w\ud800",
      /lone UTF-16 surrogate.*got \\ud800 at 1/,
    ],
    [
      "a metadata value that is a number",
      () => writeSafetensors({ w }, { k: 5 } as never),
      "__metadata__.k",
      /metadata values must be strings, expected a string, got number 5/,
    ],
    [
      "null metadata",
      () => writeSafetensors({ w }, null as never),
      "__metadata__",
      /metadata must be an object of strings.*got null/,
    ],
    ["metadata that is a string", () => writeSafetensors({ w }, "pt" as never), "__metadata__", /got "pt"/],
    ["metadata that is an array", () => writeSafetensors({ w }, ["pt"] as never), "__metadata__", /got an array/],
    // Readers (this one and the reference) refuse headers over 100 MB; ~0.3 s and ~400 MB to build.
    [
      "a header over 100 MB",
      () => writeSafetensors({ w }, { notes: "x".repeat(100_000_000) }),
      "safetensors header size",
      /header longer than the format allows.*expected <= 100000000 bytes, got 100000088 bytes/,
    ],
  ];
  it.each(refused)("%s is a SafetensorsError naming it", (_, f, subject, message) => {
    const e = failure(f);
    expect(e.subject).toBe(subject);
    expect(e.message).toMatch(message);
  });

  it("reads back what it accepts: Map metadata, names that are Object.prototype's (__proto__, constructor), tensors of no elements", () => {
    const tensors = new Map<string, AnyTensor>([
      ["__proto__", w],
      ["constructor", Tensor.int32([7], [1])],
      ["empty", Tensor.zeros([0, 4])],
    ]);
    const { tensors: read, metadata } = readSafetensors(
      writeSafetensors(
        tensors,
        new Map([
          ["__proto__", "x"],
          ["format", "pt"],
        ]),
      ),
    );
    expect([...read.keys()].sort()).toEqual(["__proto__", "constructor", "empty"]);
    expect(read.get("__proto__")!.toArray()).toEqual([1, 2]);
    expect([read.get("constructor")!.dtype, ...read.get("constructor")!.toArray()]).toEqual(["int32", 7]);
    expect(read.get("empty")!.shape).toEqual([0, 4]);
    expect(Object.entries(metadata)).toEqual([
      ["__proto__", "x"],
      ["format", "pt"],
    ]);
  });
});
