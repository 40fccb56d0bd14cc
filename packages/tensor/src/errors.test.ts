import { describe as suite, expect, it } from "vitest";
import { AttnGraphError, ShapeError, UnsupportedError, describe } from "./errors.js";

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
});
