import { describe, expect, it } from "vitest";
import { KernelTable } from "./kernel-table.js";

describe("KernelTable", () => {
  it("registers explicitly, answers supports() without throwing, refuses a second kernel and a non-function", () => {
    const t = new KernelTable<() => number>("test", "() => number");
    expect(t.supports("softmax")).toEqual({ ok: false, reason: "no kernel for op softmax" });
    const k = () => 1;
    t.register("softmax", k);
    expect(t.supports("softmax")).toEqual({ ok: true });
    expect(t.get("softmax")).toBe(k);
    expect(() => t.register("softmax", () => 2)).toThrow(/op softmax: a kernel is already registered on executor test/);
    expect(() => t.register("mask", 3 as never)).toThrow(
      /op mask: kernel for executor test must be a function, expected \(\) => number, got number/,
    );
    expect(() => t.register("", k)).toThrow(/executor test: op kind must be a non-empty string/);
    expect(t.get("softmax")).toBe(k);
  });
});
