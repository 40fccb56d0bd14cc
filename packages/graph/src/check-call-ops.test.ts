// The attribute and shape rules kernels used to restate, now each op declaration's alone: checkCall holds a hand-made
// call to them (defaults filled in, the bad field named with the rule it breaks), as every executor's dispatch does.
import { AttnGraphError } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { builtinOpDef, checkCall, type CallValue } from "./check-call.js";

const P = [2, 3];
/** A call of `kind` with every declared input of shape P (`shapes` overrides, `null` leaves an input out). */
function call(kind: string, attrs: Record<string, unknown>, shapes: Record<string, number[] | null> = {}) {
  const def = builtinOpDef(kind)!;
  const inputs = def.inputs.map((spec): CallValue | undefined => {
    const shape = Object.hasOwn(shapes, spec.name) ? shapes[spec.name] : spec.optional ? null : P;
    return shape === null || shape === undefined ? undefined : { shape, dtype: spec.dtype ?? "float32" };
  });
  return { kind, node: "n", attrs, inputs, outShape: P };
}
const ONE_STEP = { step: [] };
const codeOf = (run: () => unknown): [string, string | undefined] => {
  try {
    run();
  } catch (e) {
    if (AttnGraphError.isInstance(e)) return [e.code, e.subject];
    throw e;
  }
  return ["no error", undefined];
};

describe("optimizer ops: the declarations' defaults and rules", () => {
  it("fill in the declared defaults; only the required attributes must be given", () => {
    expect(checkCall(call("adam-moment", { beta: 0.9 })).attrs).toEqual({ beta: 0.9, square: false, weightDecay: 0 });
    expect(checkCall(call("adam-step", { lr: 1e-3 }, ONE_STEP)).attrs).toEqual({
      lr: 1e-3,
      beta1: 0.9,
      beta2: 0.999,
      eps: 1e-8,
      weightDecay: 0,
      decoupled: false,
    });
    expect(checkCall(call("sgd-momentum", { momentum: 0 }, ONE_STEP)).attrs).toEqual({
      momentum: 0,
      dampening: 0,
      weightDecay: 0,
    });
    expect(checkCall(call("sgd-step", { lr: 0.1 })).attrs).toEqual({
      lr: 0.1,
      momentum: 0,
      nesterov: false,
      weightDecay: 0,
    });
    expect(checkCall(call("clip-by-norm", { maxNorm: 1 }, { sumSquares: [] })).attrs).toEqual({
      maxNorm: 1,
      eps: 1e-6,
    });
  });

  it("name the bad attribute, with the rule it breaks", () => {
    const bad: [string, Record<string, unknown>, string, Record<string, number[] | null>?][] = [
      ["adam-moment", {}, "beta"],
      ["adam-moment", { beta: 1 }, "beta"],
      ["adam-moment", { beta: 0.9, square: 1 }, "square"],
      ["adam-moment", { beta: 0.9, weightDecay: -1 }, "weightDecay"],
      ["adam-step", { lr: 0 }, "lr", ONE_STEP],
      ["adam-step", { lr: Infinity }, "lr", ONE_STEP],
      ["adam-step", { lr: 1, beta1: -0.1 }, "beta1", ONE_STEP],
      ["adam-step", { lr: 1, beta2: 1 }, "beta2", ONE_STEP],
      ["adam-step", { lr: 1, eps: Number.NaN }, "eps", ONE_STEP],
      ["adam-step", { lr: 1, decoupled: "yes" }, "decoupled", ONE_STEP],
      ["sgd-momentum", {}, "momentum", ONE_STEP],
      ["sgd-momentum", { momentum: 0.9, dampening: 1.5 }, "dampening", ONE_STEP],
      ["sgd-momentum", { momentum: 0.9, weightDecay: -1 }, "weightDecay", ONE_STEP],
      ["sgd-step", {}, "lr"],
      ["sgd-step", { lr: 1, momentum: -1 }, "momentum"],
      ["sgd-step", { lr: 1, nesterov: 0 }, "nesterov"],
      ["sgd-step", { lr: 1, nesterov: true }, "nesterov"],
      ["sgd-step", { lr: 1, weightDecay: -1 }, "weightDecay"],
      ["clip-by-norm", {}, "maxNorm", { sumSquares: [] }],
      ["clip-by-norm", { maxNorm: 0 }, "maxNorm", { sumSquares: [] }],
      ["clip-by-norm", { maxNorm: 1, eps: -1 }, "eps", { sumSquares: [] }],
      ["grad-accumulate", { scale: Infinity }, "scale", ONE_STEP],
    ];
    for (const [kind, attrs, field, shapes] of bad)
      expect(
        codeOf(() => checkCall(call(kind, attrs, shapes))),
        `${kind} ${JSON.stringify(attrs)}`,
      ).toEqual(["attr", `n.${field}`]);
  });

  it("the step is one number, [] or [1]; weight decay needs the parameter", () => {
    for (const step of [[], [1]])
      expect(codeOf(() => checkCall(call("adam-step", { lr: 1 }, { step })))[0]).toBe("no error");
    expect(codeOf(() => checkCall(call("adam-step", { lr: 1 }, { step: [2] })))).toEqual(["shape", "n.step"]);
    expect(codeOf(() => checkCall(call("sgd-momentum", { momentum: 0.9 }, { step: [1, 1] })))).toEqual([
      "shape",
      "n.step",
    ]);
    expect(codeOf(() => checkCall(call("adam-moment", { beta: 0.9, weightDecay: 0.1 })))).toEqual(["input", "n.param"]);
  });
});

describe("other ops' attributes", () => {
  it("pad's axis past the rank and a negative count are attr errors; gelu's form is one of two", () => {
    const out = (shape: number[]) => ({ ...call("pad", { axis: 0, before: 1, after: 0 }), outShape: shape });
    expect(checkCall(out([3, 3])).attrs).toEqual({ axis: 0, before: 1, after: 0 });
    expect(codeOf(() => checkCall({ ...out([2, 3]), attrs: { axis: 2, before: 0, after: 0 } }))).toEqual([
      "attr",
      "n.axis",
    ]);
    expect(codeOf(() => checkCall({ ...out([2, 3]), attrs: { axis: 0, before: -1, after: 0 } }))).toEqual([
      "attr",
      "n.before",
    ]);
    expect(codeOf(() => checkCall(call("gelu", { approximate: "fast" })))).toEqual(["attr", "n.approximate"]);
    expect(checkCall(call("gelu", {})).attrs).toEqual({ approximate: "none" });
  });
});
