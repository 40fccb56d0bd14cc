import { AttnGraphError } from "@attngraph/tensor";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FileError, isDirectory, listJson, readBytes, readText, writeFile } from "./files.js";

const tmp = () => mkdtempSync(join(tmpdir(), "attngraph-files-"));

/** The FileError `io` throws (failing the test when it throws nothing or something else). */
function fileError(io: () => unknown): FileError {
  try {
    io();
  } catch (e) {
    expect(e).toBeInstanceOf(FileError);
    return e as FileError;
  }
  throw new Error("expected a FileError, nothing was thrown");
}

describe("files: one line naming the path and the reason", () => {
  it("reads text and bytes, writes, lists *.json sorted", () => {
    const dir = tmp();
    writeFile(join(dir, "b.json"), "{}");
    writeFile(join(dir, "a.json"), new Uint8Array([123, 125]));
    writeFileSync(join(dir, "c.txt"), "");
    expect(readText(join(dir, "b.json"))).toBe("{}");
    expect(readBytes(join(dir, "a.json"))).toEqual(new Uint8Array([123, 125]));
    expect(listJson(dir)).toEqual([join(dir, "a.json"), join(dir, "b.json")]);
    expect([isDirectory(dir), isDirectory(join(dir, "a.json")), isDirectory(join(dir, "none"))]).toEqual([
      true,
      false,
      false,
    ]);
  });

  it("a missing file, a folder read as a file, the flag that named it", () => {
    const dir = tmp();
    const missing = fileError(() => readBytes(join(dir, "nope.safetensors"), "--weights"));
    expect(missing.message).toBe(
      `--weights ${join(dir, "nope.safetensors")}: cannot read the file, expected a readable file, got no such file or folder (ENOENT)`,
    );
    expect([missing.code, missing.errno, missing.path, AttnGraphError.isInstance(missing)]).toEqual([
      "file",
      "ENOENT",
      join(dir, "nope.safetensors"),
      true,
    ]);
    expect(fileError(() => readText(dir)).message).toBe(
      `${dir}: cannot read the file, expected a readable file, got it is a folder (EISDIR)`,
    );
  });

  it("a write into a missing folder, onto a folder", () => {
    const dir = tmp();
    const path = join(dir, "no/such/dir/m.onnx");
    expect(fileError(() => writeFile(path, "x", "-o")).message).toBe(
      `-o ${path}: cannot write the file, expected a writable file in an existing folder, got its folder does not exist (ENOENT)`,
    );
    expect(fileError(() => writeFile(dir, "x", "-o")).message).toMatch(
      /: cannot write the file, .*, got it is a folder \(EISDIR\)$/,
    );
  });

  it.skipIf(!existsSync("/dev/full"))("a full disk (/dev/full)", () => {
    expect(fileError(() => writeFile("/dev/full", new Uint8Array(10), "-o")).message).toBe(
      "-o /dev/full: cannot write the file, expected a writable file in an existing folder, got no space left on the device (ENOSPC)",
    );
  });

  it("a folder to list that is a file, or missing", () => {
    const dir = tmp();
    writeFileSync(join(dir, "case.json"), "{}");
    expect(fileError(() => listJson(join(dir, "case.json"))).message).toMatch(
      /case\.json: cannot list the folder, expected a readable folder, got it is not a folder \(ENOTDIR\)$/,
    );
    expect(fileError(() => listJson(join(dir, "none"))).errno).toBe("ENOENT");
  });

  it("a long path is cut in the message", () => {
    const path = join(tmp(), "p".repeat(200), "x.json");
    const e = fileError(() => readText(path));
    expect(e.message.length).toBeLessThan(300);
    expect(e.message).toContain("…");
  });
});
