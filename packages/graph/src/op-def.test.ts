import { ShapeError } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { namedSlotOp, validationError } from "../test/helpers.js";
import { GraphBuilder } from "./builder.js";
import type { SymShape } from "./dims.js";
import { GraphValidationError } from "./errors.js";
import { defineOp, inferShape, makeContext, normalizeAttrs, type OpDef } from "./op-def.js";
import { OpRegistry, createOpRegistry } from "./registry.js";
import { builtinOps, softmaxOp } from "./ops/index.js";

interface SoftcapAttrs {
  readonly cap: number;
}

/** A user op as a user would write it: soft-capping of scores, shape unchanged. */
const softcap = defineOp<SoftcapAttrs>({
  kind: "softcap",
  doc: "cap · tanh(x / cap), elementwise (Gemma 2 logit soft-capping)",
  inputs: [{ name: "x", doc: "[..., S]" }],
  attrs: { cap: { type: "number", min: 0, doc: "the cap" } },
  inferShape: ([x]) => x!,
});

/** A user op whose shape rule is replaced, to see how its mistakes surface. */
function userOp(rule: OpDef<SoftcapAttrs>["inferShape"], extra: Partial<OpDef<SoftcapAttrs>> = {}): GraphBuilder {
  const op = defineOp<SoftcapAttrs>({ ...softcap, kind: "softcap", inferShape: rule, ...extra });
  const b = new GraphBuilder({ registry: createOpRegistry([op]) });
  b.input("s", ["B", 2, "T", "T"]);
  return b;
}

describe("defineOp and user ops", () => {
  it("registers and builds a user op", () => {
    const registry = createOpRegistry();
    registry.register(softcap);
    expect(registry.has("softcap")).toBe(true);
    const b = new GraphBuilder({ registry });
    b.input("s", ["B", 2, "T", "T"]);
    const c = b.add("softcap", "capped", { x: "s" }, { cap: 50 });
    const m = b.add("mask", "masked", { scores: c }, { causal: true });
    const g = b.output(m).build();
    expect(g.node("capped").shape).toEqual(["B", 2, "T", "T"]);
    expect(g.node("capped").attrs).toEqual({ cap: 50 });
    expect(g.node("capped").kind).toBe("softcap");
  });

  it("checks the user op's attributes like a built-in's", () => {
    const b = new GraphBuilder({ registry: createOpRegistry([softcap]) });
    b.input("s", [1]);
    expect(validationError(() => b.add("softcap", "c", { x: "s" })).message).toBe(
      "c.cap: missing attribute, expected number",
    );
    expect(validationError(() => b.add("softcap", "c", { x: "s" }, { cap: -1 })).expected).toBe(">= 0");
    expect(validationError(() => b.add("softcap", "c", { x: "s" }, { cap: 1, scale: 2 })).subject).toBe("c.scale");
  });

  // Slot and attribute names are the op author's strings; "valueOf" is as legal as "cap". Before own-key lookups, an
  // empty optional slot named "valueOf" read Object.prototype.valueOf ("input refers to no value ..., got function").
  it.each(["valueOf", "constructor", "toString", "__proto__"])(
    "a user op may name an optional slot and an attribute %s",
    (name) => {
      const op = namedSlotOp(name);
      const b = new GraphBuilder({ registry: createOpRegistry([op]) });
      b.input("s", [2, 3]);
      const left = b.add("named", "left", { x: "s" }); // slot empty, attribute defaulted
      const given = b.add("named", "given", { x: "s", [name]: "s" }, { [name]: 5 });
      const g = b.output(left, given).build();
      expect(Object.getPrototypeOf(g.node("left").attrs)).toBe(Object.prototype);
      expect(Object.entries(g.node("left").attrs)).toEqual([[name, 2]]);
      expect(Object.entries(g.node("given").attrs)).toEqual([[name, 5]]);
      expect(
        g
          .consumers("s")
          .map((c) => c.slot)
          .sort(),
      ).toEqual([name, "x", "x"].sort());
    },
  );

  it("rejects bad declarations", () => {
    expect(() => defineOp({ ...softcap, kind: "soft cap" })).toThrow(GraphValidationError);
    expect(() => defineOp({ ...softcap, kind: "" })).toThrow(/invalid op kind/);
    expect(() => defineOp({ ...softcap, inputs: [] })).toThrow(/declares no inputs/);
    expect(() => defineOp({ ...softcap, inputs: [{ name: "x" }, { name: "x" }] })).toThrow(/"x" declared twice/);
    expect(() => defineOp({ ...softcap, inferShape: undefined as never })).toThrow(/no shape rule/);
    expect(defineOp({ ...softcap, kind: "my.ops.soft-cap2" }).kind).toBe("my.ops.soft-cap2");
    expect(Object.isFrozen(softcap)).toBe(true);
  });

  it("a shape rule that throws a plain Error becomes a GraphValidationError naming the node, keeping the cause", () => {
    const boom = new Error("cap must divide S");
    const b = userOp(() => {
      throw boom;
    });
    const e = validationError(() => b.add("softcap", "capped", { x: "s" }, { cap: 1 }));
    expect(e.subject).toBe("capped");
    expect(e.message).toBe("capped: shape rule of op softcap threw: cap must divide S");
    expect(e.cause).toBe(boom);
  });

  it("a shape rule with a bug (TypeError) is named the same way", () => {
    const b = userOp((inputs) => (inputs[3] as SymShape).slice());
    const e = validationError(() => b.add("softcap", "capped", { x: "s" }, { cap: 1 }));
    expect(e.subject).toBe("capped");
    expect(e.cause).toBeInstanceOf(TypeError);
    const thrower = userOp(() => {
      throw "a string";
    });
    expect(validationError(() => thrower.add("softcap", "c", { x: "s" }, { cap: 1 })).message).toContain(
      'threw: "a string"',
    );
  });

  it("errors of the project pass through a shape rule unchanged", () => {
    const b = userOp((_inputs, _a, ctx) => ctx.fail("x", "needs a square", "L = S", "L != S"));
    expect(validationError(() => b.add("softcap", "c", { x: "s" }, { cap: 1 })).message).toBe(
      "c.x: needs a square, expected L = S, got L != S",
    );
    const shape = new ShapeError("inner", "bad");
    const c = userOp(() => {
      throw shape;
    });
    expect(() => c.add("softcap", "c", { x: "s" }, { cap: 1 })).toThrow(shape);
  });

  it("a shape rule returning an invalid shape names the node", () => {
    for (const bad of [undefined, "B", [-1], ["B", 2.5], ["B", ""], [Number.NaN], [{}]]) {
      const b = userOp(() => bad as never);
      const e = validationError(() => b.add("softcap", "c", { x: "s" }, { cap: 1 }));
      expect(e.subject).toBe("c");
      expect(e.message).toContain("shape rule of op softcap returned an invalid shape");
    }
  });

  it("a shape rule returning the wrong rank surfaces at the first consumer that needs the rank", () => {
    // The graph cannot know what rank a user op should return; it trusts the rule, and the next op that declares a
    // rank names itself, its slot and the shape it got.
    const b = userOp(([x]) => x!.slice(0, 2));
    const c = b.add("softcap", "capped", { x: "s" }, { cap: 1 });
    expect(b.shapeOf(c)).toEqual(["B", 2]);
    const e = validationError(() => b.add("mask", "masked", { scores: c }, { causal: true }));
    expect(e.subject).toBe("masked.scores");
    expect([e.expected, e.got]).toEqual(["rank 4", "[B, 2] (rank 2)"]);
  });

  it("an attribute check that throws a plain Error is named too", () => {
    const b = userOp(([x]) => x!, {
      checkAttrs: (a) => {
        if (a.cap > 100) throw new RangeError("cap too large");
      },
    });
    const e = validationError(() => b.add("softcap", "c", { x: "s" }, { cap: 101 }));
    expect(e.subject).toBe("c");
    expect(e.message).toContain("attribute check of op softcap threw: cap too large");
    expect(e.cause).toBeInstanceOf(RangeError);
  });
});

describe("normalizeAttrs and inferShape", () => {
  const ctx = makeContext("n");

  it("fills defaults and copies arrays", () => {
    const perm = [1, 0];
    const out = normalizeAttrs(builtinOps.find((o) => o.kind === "transpose")!, { perm }, ctx);
    expect(out).toEqual({ perm: [1, 0] });
    expect(out.perm).not.toBe(perm);
    expect(normalizeAttrs(softmaxOp, {}, ctx)).toEqual({ scale: 1 });
  });

  it('checks "numbers" attributes: an array of finite numbers, copied', () => {
    const alibi = builtinOps.find((o) => o.kind === "alibi")!;
    const slopes = [0.5, 0.25];
    const out = normalizeAttrs(alibi, { slopes }, ctx);
    expect(out).toEqual({ slopes: [0.5, 0.25], scale: 1, alignment: "top-left" });
    expect(out.slopes).not.toBe(slopes);
    expect(normalizeAttrs(alibi, {}, ctx).slopes).toBeNull();
    for (const bad of [[0.5, Infinity], [0.5, NaN], ["0.5"], 0.5]) {
      const e = validationError(() => normalizeAttrs(alibi, { slopes: bad }, ctx));
      expect([e.subject, e.expected]).toEqual(["n.slopes", "an array of finite numbers"]);
    }
  });

  // Kernels read these as float32; 1e39 would be Infinity there (and NaN at the end of the run).
  it("number attributes beyond the float32 range are invalid", () => {
    const alibi = builtinOps.find((o) => o.kind === "alibi")!;
    const scale = validationError(() => normalizeAttrs(softmaxOp, { scale: 1e39 }, ctx));
    expect([scale.subject, scale.expected, scale.got]).toEqual([
      "n.scale",
      "a number within the float32 range (|v| <= 3.4028234663852886e+38)",
      "1e+39",
    ]);
    expect(validationError(() => normalizeAttrs(softmaxOp, { scale: -3.5e38 }, ctx)).subject).toBe("n.scale");
    const slopes = validationError(() => normalizeAttrs(alibi, { slopes: [0.5, 1e39] }, ctx));
    expect([slopes.subject, slopes.expected]).toEqual([
      "n.slopes",
      "numbers within the float32 range (|v| <= 3.4028234663852886e+38)",
    ]);
    expect(normalizeAttrs(softmaxOp, { scale: 3.4028234663852886e38 }, ctx)).toEqual({ scale: 3.4028234663852886e38 });
  });

  it("checks declared input ranks before the rule runs", () => {
    const e = validationError(() =>
      inferShape(
        builtinOps.find((o) => o.kind === "score")!,
        [
          ["B", 2, 3],
          ["B", 2, 3, 4],
        ],
        {},
        ctx,
      ),
    );
    expect(e.subject).toBe("n.q");
  });

  it("makeContext names node.field, or the node alone", () => {
    expect(() => ctx.fail("f", "what")).toThrow("n.f: what");
    expect(() => ctx.fail("", "what", "e", "g")).toThrow("n: what, expected e, got g");
  });
});

describe("OpRegistry", () => {
  it("holds the built-in op kinds from one explicit list", () => {
    expect(createOpRegistry().kinds()).toEqual([
      "projection",
      "reshape",
      "transpose",
      "slice",
      "rope",
      "score",
      "alibi",
      "score-mod",
      "mask-mod",
      "mask",
      "softmax",
      "dropout",
      "weighted-sum",
      "out-proj",
      "attention",
      "kv-append",
      "layer-norm",
      "gelu",
      "relu",
      "add",
      "rms-norm",
      "silu",
      "mul",
      "pointwise",
      "embedding",
      "position-embedding",
      "cross-entropy",
      "linear-gelu",
      "add-layer-norm",
      "sum-to",
      "pad",
      "linear-weight-grad",
      "softmax-grad",
      "mask-grad",
      "score-mod-input-grad",
      "layer-norm-grad",
      "layer-norm-weight-grad",
      "gelu-grad",
      "rms-norm-grad",
      "rms-norm-weight-grad",
      "embedding-grad",
      "position-embedding-grad",
      "cross-entropy-grad",
      "attention-lse",
      "attention-grad",
      "adam-moment",
      "adam-step",
      "sgd-momentum",
      "sgd-step",
      "sum-squares",
      "clip-by-norm",
      "grad-accumulate",
    ]);
    expect(new OpRegistry().kinds()).toEqual([]);
  });

  it("a second op of the same kind is an error naming both", () => {
    const other = defineOp<SoftcapAttrs>({ ...softcap, doc: "another soft-cap" });
    const registry = createOpRegistry([softcap]);
    const e = validationError(() => registry.register(other));
    expect(e.code).toBe("duplicate-op");
    expect(e.subject).toBe("op softcap");
    expect(e.message).toContain(softcap.doc);
    expect(e.message).toContain("another soft-cap");
    expect(validationError(() => createOpRegistry([softmaxOp])).message).toContain("op softmax");
  });

  it("an unknown kind names the node that asked (code unknown-op)", () => {
    const e = validationError(() => createOpRegistry().get("softcap", "blocks.0.cap"));
    expect(e.code).toBe("unknown-op");
    expect(e.subject).toBe("blocks.0.cap");
    expect(validationError(() => createOpRegistry().get("softcap")).subject).toBe("graph");
  });
});
