import { AttnGraphError, ShapeError } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { checkCall, type CallValue } from "./check-call.js";
import type { KernelCall } from "./executor-contract.js";

const v = (shape: number[], dtype?: "float32" | "int32"): CallValue => ({ shape, ...(dtype ? { dtype } : {}) });
const call = (c: Partial<KernelCall<CallValue | undefined>>): KernelCall<CallValue | undefined> => ({
  kind: "score",
  node: "scores",
  attrs: {},
  inputs: [v([1, 4, 3, 8]), v([1, 2, 5, 8])],
  outShape: [1, 4, 3, 5],
  ...c,
});
/** The error `run` throws, which must be an AttnGraphError. */
const failure = (run: () => unknown): AttnGraphError => {
  try {
    run();
  } catch (e) {
    expect(AttnGraphError.isInstance(e), String(e)).toBe(true);
    return e as AttnGraphError;
  }
  throw new Error("expected a throw");
};

describe("checkCall: a kernel call against its op's declaration", () => {
  it("passes a call that fits, returning it as it is when its attributes are already whole", () => {
    const c = call({});
    expect(checkCall(c)).toBe(c);
  });

  it("fills in defaults, and returns the same normalized object for the same attribute object", () => {
    const attrs = { causal: true };
    const c = call({
      kind: "mask",
      node: "masked",
      attrs,
      inputs: [v([1, 2, 3, 3]), undefined],
      outShape: [1, 2, 3, 3],
    });
    const a = checkCall(c).attrs;
    expect(a).toMatchObject({ causal: true, window: null, alignment: "top-left", scale: 1 });
    expect(checkCall(c).attrs).toBe(a);
    expect(checkCall({ ...c, attrs: a }).attrs).toBe(a);
  });

  it("a missing required input is an input error naming it", () => {
    const e = failure(() => checkCall(call({ inputs: [v([1, 4, 3, 8]), undefined] })));
    expect(e.code).toBe("input");
    expect(e.message).toMatch(/^scores\.k: missing required input 1 \(k\) of op score/);
  });

  it("a value of the wrong dtype is an input error naming the slot and both dtypes", () => {
    const e = failure(() => checkCall(call({ inputs: [v([1, 4, 3, 8], "int32"), v([1, 2, 5, 8])] })));
    expect(e.code).toBe("input");
    expect(e.message).toMatch(/^scores\.q: .*wrong dtype.*expected float32, got int32/);
  });

  it("an invalid attribute is an attr error naming node and field", () => {
    const c = call({ kind: "softmax", node: "w", attrs: { scale: Number.NaN }, inputs: [v([2, 3])], outShape: [2, 3] });
    const e = failure(() => checkCall(c));
    expect(e.code).toBe("attr");
    expect(e.message).toMatch(/^w\.scale: /);
    const unknown = failure(() => checkCall({ ...c, attrs: { scale: 1, temperature: 2 } }));
    expect(unknown.message).toMatch(/^w\.temperature: unknown attribute/);
  });

  it("inputs that break the shape rule are a ShapeError naming the input", () => {
    const e = failure(() => checkCall(call({ inputs: [v([1, 4, 3, 8]), v([1, 3, 5, 8])] })));
    expect(e).toBeInstanceOf(ShapeError);
    expect(e.message).toMatch(/^scores\.k: /);
    const rank = failure(() => checkCall(call({ inputs: [v([4, 3, 8]), v([1, 2, 5, 8])] })));
    expect(rank.message).toMatch(/^scores\.q: input must have rank 4/);
  });

  it("an outShape other than the rule's is a ShapeError naming outShape", () => {
    const e = failure(() => checkCall(call({ outShape: [1, 4, 3, 6] })));
    expect(e).toBeInstanceOf(ShapeError);
    expect(e.message).toMatch(/^scores\.outShape: .*expected \[1, 4, 3, 5\], got \[1, 4, 3, 6\]/);
  });

  it("a kind without a built-in declaration (a user's op) is its kernel's to check", () => {
    const c = call({ kind: "my-op", attrs: { anything: 1 }, inputs: [] });
    expect(checkCall(c)).toBe(c);
  });
});

describe("checkCall: what only a run binds", () => {
  it("a dim attribute still holding a name is an attr error naming it", () => {
    const c = call({
      kind: "position-embedding",
      node: "pos",
      attrs: { offset: "N" },
      inputs: [v([1, 3], "int32"), v([8, 4])],
      outShape: [3, 4],
    });
    const e = failure(() => checkCall(c));
    expect(e.code).toBe("attr");
    expect(e.message).toMatch(/^pos\.offset: unbound dim name/);
    expect(checkCall({ ...c, attrs: { offset: 5 } }).attrs).toEqual({ offset: 5 });
    expect(failure(() => checkCall({ ...c, attrs: { offset: 6 } })).message).toMatch(/^pos\.offset: positions 6\.\.8/);
  });
});

describe("checkCall: a call again", () => {
  it("with the attribute object of a call that passed and other shapes is checked again", () => {
    const attrs = {};
    const ok = call({ attrs });
    expect(checkCall(ok)).toBe(ok);
    expect(checkCall(call({ attrs }))).toEqual(ok);
    const e = failure(() => checkCall(call({ attrs, inputs: [v([1, 4, 3, 8]), v([1, 3, 5, 8])] })));
    expect(e.message).toMatch(/^scores\.k: /);
    const dtype = failure(() => checkCall(call({ attrs, inputs: [v([1, 4, 3, 8], "int32"), v([1, 2, 5, 8])] })));
    expect(dtype.code).toBe("input");
    expect(failure(() => checkCall(call({ attrs, outShape: [1, 4, 3, 4] }))).message).toMatch(/outShape/);
  });

  it("past the bound of what it remembers (fresh attribute objects every call, as per-run seeds make), still checks", () => {
    const mask = (scale: number) =>
      call({
        kind: "mask",
        node: "m",
        attrs: { causal: true, scale },
        inputs: [v([1, 1, 2, 2]), undefined],
        outShape: [1, 1, 2, 2],
      });
    for (let i = 0; i < 3000; i++) expect(checkCall(mask(1 + i)).attrs).toMatchObject({ scale: 1 + i, window: null });
    expect(failure(() => checkCall(mask(Number.NaN))).message).toMatch(/^m\.scale: /);
  });
});
