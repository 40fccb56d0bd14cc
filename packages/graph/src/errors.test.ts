import { AttnGraphError } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { GraphFormatError, GraphValidationError, show } from "./errors.js";

describe("errors", () => {
  it("GraphValidationError says subject, what, expected and got, with a code", () => {
    const e = new GraphValidationError("q.weight", "bad", "8", "7");
    expect(e.message).toBe("q.weight: bad, expected 8, got 7");
    expect(e.code).toBe("validation");
    expect(e.name).toBe("GraphValidationError");
    expect(AttnGraphError.isInstance(e)).toBe(true);
    const c = new Error("inner");
    const d = new GraphValidationError("n", "wrapped", undefined, undefined, "validation", c);
    expect(d.cause).toBe(c);
    expect(d.expected).toBeUndefined();
  });

  it("GraphFormatError names the JSON path", () => {
    const e = new GraphFormatError("$.nodes[0].kind", "wrong type", "a non-empty string", "7");
    expect(e.subject).toBe("$.nodes[0].kind");
    expect(e.code).toBe("format");
  });

  it("show renders values briefly", () => {
    expect(show("w")).toBe('"w"');
    expect(show(undefined)).toBe("undefined");
    expect(show(null)).toBe("null");
    expect(show(Number.NaN)).toBe("NaN");
    expect(show(-Infinity)).toBe("-Infinity");
    expect(show([8, "B"])).toBe('[8,"B"]');
    expect(show({ a: 1, b: [true] })).toBe('{"a":1,"b":[true]}');
    expect(show(() => 1)).toBe("function");
  });

  it("show stays short and cheap on huge or deep values", () => {
    expect(show("x".repeat(10_000_000)).length).toBeLessThanOrEqual(80);
    expect(show(Array.from({ length: 1_000_000 }, (_, i) => i)).length).toBeLessThanOrEqual(80);
    let deep: unknown[] = [];
    for (let i = 0; i < 1_000_000; i++) deep = [deep];
    expect(show(deep)).toBe("[[[[[...]]]]]");
    const hostile = new Proxy(
      {},
      {
        ownKeys: () => {
          throw new Error("no");
        },
      },
    );
    expect(show(hostile)).toBe("object");
  });
});
