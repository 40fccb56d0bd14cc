import { describe as suite, expect, it } from "vitest";
import { AttnGraphError, ShapeError, SubjectError, UnsupportedError, clip, describe } from "./errors.js";

suite("errors", () => {
  it("describe builds 'subject: what, expected X, got Y'", () => {
    expect(describe("node.x", "bad rank", "rank 4", "rank 3")).toBe("node.x: bad rank, expected rank 4, got rank 3");
    expect(describe("node", "broken")).toBe("node: broken");
    expect(describe("node", "broken", undefined, "3")).toBe("node: broken, got 3");
  });

  it("isInstance recognises errors by the global marker, also from another copy of the package", () => {
    expect(AttnGraphError.isInstance(new ShapeError("t", "bad"))).toBe(true);
    expect(AttnGraphError.isInstance(new Error("plain"))).toBe(false);
    expect(AttnGraphError.isInstance(null)).toBe(false);
    expect(AttnGraphError.isInstance("error")).toBe(false);
    const foreign = Object.assign(new Error("from a duplicate copy"), { [Symbol.for("attngraph.error")]: true });
    expect(AttnGraphError.isInstance(foreign)).toBe(true);
  });

  it("ShapeError and UnsupportedError carry code, subject, expected, got", () => {
    const e = new ShapeError("reshape", "element count must stay the same", "6 elements", "[4]");
    expect(e).toBeInstanceOf(Error);
    expect(e.name).toBe("ShapeError");
    expect(e.code).toBe("shape");
    expect([e.subject, e.expected, e.got]).toEqual(["reshape", "6 elements", "[4]"]);
    const u = new UnsupportedError("op mask on executor webgpu", { subject: "mask", cause: new Error("x") });
    expect(u.message).toBe("unsupported: op mask on executor webgpu");
    expect(u.code).toBe("unsupported");
    expect((u.cause as Error).message).toBe("x");
  });

  it("SubjectError words its message with describe and keeps only the fields given, and a cause", () => {
    const e = new SubjectError("input", "x", "missing");
    expect(e.message).toBe("x: missing");
    expect(e.code).toBe("input");
    expect(e).toBeInstanceOf(AttnGraphError);
    expect("cause" in e).toBe(false);
    expect([e.subject, e.expected, e.got]).toEqual(["x", undefined, undefined]);
    const cause = new Error("inner");
    const c = new SubjectError("format", "doc.a", "bad", undefined, "3", cause);
    expect(c.message).toBe("doc.a: bad, got 3");
    expect([c.expected, c.got, c.cause]).toEqual([undefined, "3", cause]);
  });

  it("clip keeps short strings and cuts long ones to max characters, keeping both ends", () => {
    expect(clip("short")).toBe("short");
    expect(clip("x".repeat(120))).toBe("x".repeat(120));
    const long = `${"a".repeat(100)}${"b".repeat(1_000_000)}${"c".repeat(100)}`;
    const cut = clip(long);
    expect(cut).toHaveLength(120);
    expect(cut).toBe(`${"a".repeat(80)}…${"c".repeat(39)}`);
    expect(clip("abcdefghij", 5)).toBe("abc…j");
  });

  it("clip never splits a surrogate pair", () => {
    const cut = clip("😀".repeat(100), 10); // each emoji is two UTF-16 units
    expect(cut).toBe("😀😀😀…😀");
    expect(cut).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
  });

  // docs/reliability.md promises every message under 600 characters; a 4 MB name used to make a 4 MB message.
  it("a message built from 4 MB values stays under 600 characters, and the fields say what the message says", () => {
    const huge = "n".repeat(4_000_000);
    const e = new ShapeError(huge, `what ${huge}`, `expected ${huge}`, `"${huge}"`);
    expect(e.message.length).toBeLessThan(600);
    expect(e.message).toContain("…");
    expect(e.subject).toHaveLength(120);
    expect(e.got).toHaveLength(120);
    expect(e.got!.endsWith('n"')).toBe(true);
    expect(e.message).toBe(describe(e.subject!, `what ${huge}`, e.expected, e.got));
    expect(describe(huge, huge, huge, huge).length).toBeLessThan(600);
  });

  it("any AttnGraphError message is cut below 600 characters, also one not built by describe", () => {
    const u = new UnsupportedError(`op ${"k".repeat(10_000)} on executor cpu`);
    expect(u.message.length).toBeLessThan(600);
    expect(u.message.startsWith("unsupported: op kkk")).toBe(true);
    expect(u.message.endsWith("on executor cpu")).toBe(true);
  });
});
