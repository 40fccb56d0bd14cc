// loadStateDict's checks of what it is given: JSON tensors' elements (a float32 number each, never silently NaN, ∞ or
// 0), a state_dict as an object or a Map, and a graph, state_dict or options of the wrong kind as typed errors naming
// them. (Missing, unexpected and mis-shaped keys against a real block: block.test.ts.)
import { GraphBuilder, GraphValidationError } from "@attngraph/graph";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { addLinear } from "./layers.js";
import { loadStateDict, StateDictError } from "./state-dict.js";

/** x [1, 2] → nn.Linear(2, 2): weights lin.weight [2, 2] and lin.bias [2]. */
function linear() {
  const b = new GraphBuilder();
  return b.output(addLinear(b, b.input("x", [1, 2]), "lin", 2)).build();
}

const graph = linear();
const bias = { shape: [2], data: [0.5, -0.5] };

function failure(f: () => unknown): AttnGraphError {
  try {
    f();
  } catch (e) {
    expect(AttnGraphError.isInstance(e)).toBe(true);
    expect((e as Error).message.length).toBeLessThan(600);
    return e as AttnGraphError;
  }
  throw new Error("loadStateDict accepted it");
}

describe("loadStateDict: JSON tensors", () => {
  const bad: [string, unknown, string][] = [
    ["a string", "abc", 'the string "abc"'],
    ["null", null, "null"],
    ["1e39 (float32 ∞)", 1e39, "1e+39"],
    ["-3.4028236e38 (rounds to float32 -∞)", -3.4028236e38, "-3.4028236e+38"],
    ["NaN", NaN, "NaN"],
    ["Infinity", Infinity, "Infinity"],
    ["a nested row, as tolist() writes", [1, 2], "an array (data must be flat)"],
    ["a boolean", true, "true"],
  ];
  it.each(bad)(
    "an element that is %s is a StateDictError naming the tensor, the index, what was expected and what came",
    (_, value, got) => {
      const e = failure(() =>
        loadStateDict(graph, { "lin.weight": { shape: [2, 2], data: [1, 2, value, 4] as number[] }, "lin.bias": bias }),
      );
      expect(e).toBeInstanceOf(StateDictError);
      expect((e as StateDictError).badValues).toEqual([
        { key: "lin.weight", index: 2, expected: "a finite float32 number", got },
      ]);
      expect(e.message).toBe(
        `state_dict does not fit the graph: bad values (expected finite float32 numbers): ${got} at lin.weight[2]`,
      );
    },
  );

  it("names the first bad element of every tensor, beside missing and unexpected keys, in one error", () => {
    const e = failure(() =>
      loadStateDict(graph, { "lin.weight": { shape: [2, 2], data: [1, "x", null, 4] as number[] }, extra: bias }),
    ) as StateDictError;
    expect([e.missing, e.unexpected, e.badValues.map((b) => `${b.key}[${b.index}]`)]).toEqual([
      ["lin.bias"],
      ["extra"],
      ["lin.weight[1]"],
    ]);
    const both = failure(() =>
      loadStateDict(graph, {
        "lin.weight": { shape: [2, 2], data: [1, 2, 3, NaN] },
        "lin.bias": { shape: [2], data: new Float64Array([1e40, 0]) },
      }),
    ) as StateDictError;
    expect(both.badValues.map((b) => `${b.key}[${b.index}] ${b.got}`)).toEqual([
      "lin.weight[3] NaN",
      "lin.bias[0] 1e+40",
    ]);
  });

  it("keeps what a checkpoint may hold: -0, underflow to 0 (1e-50), a decimal that rounds to float32's largest, typed arrays", () => {
    const w = loadStateDict(graph, {
      "lin.weight": { shape: [2, 2], data: [-0, 1e-50, 3.4028235e38, -1.5] },
      "lin.bias": { shape: [2], data: new Float32Array([0.25, 2]) },
    });
    const values = w["lin.weight"]!.toArray();
    expect(Object.is(values[0], -0)).toBe(true);
    expect(values.slice(1)).toEqual([0, 3.4028234663852886e38, -1.5]);
    expect(w["lin.bias"]!.toArray()).toEqual([0.25, 2]);
  });
});

describe("loadStateDict: what it is given", () => {
  const tensors = { "lin.weight": Tensor.from([1, 2, 3, 4], [2, 2]), "lin.bias": Tensor.from([0, 1], [2]) };

  it("takes a Map (what readSafetensors returns) as it takes an object, missing keys and all", () => {
    const fromMap = loadStateDict(graph, new Map(Object.entries(tensors)));
    expect(Object.keys(fromMap)).toEqual(["lin.weight", "lin.bias"]);
    expect(fromMap["lin.weight"]).toBe(tensors["lin.weight"]);
    const e = failure(() => loadStateDict(graph, new Map([["lin.weight", tensors["lin.weight"]]]))) as StateDictError;
    expect(e.missing).toEqual(["lin.bias"]);
  });

  const wrong: [string, () => unknown, string, RegExp][] = [
    [
      "a null state_dict",
      () => loadStateDict(graph, null as never),
      "loadStateDict stateDict",
      /not a state_dict, expected an object or Map of tensors by state_dict key, got null$/,
    ],
    [
      "an undefined state_dict",
      () => loadStateDict(graph, undefined as never),
      "loadStateDict stateDict",
      /got undefined$/,
    ],
    [
      "an array of tensors",
      () => loadStateDict(graph, [tensors["lin.weight"]] as never),
      "loadStateDict stateDict",
      /got an array$/,
    ],
    ["a string", () => loadStateDict(graph, "lin.weight" as never), "loadStateDict stateDict", /got "lin\.weight"$/],
    [
      "a Map with a number key",
      () => loadStateDict(graph, new Map<unknown, unknown>([[1, tensors["lin.bias"]]]) as never),
      "loadStateDict stateDict",
      /string keys, got number 1$/,
    ],
    ["a null graph", () => loadStateDict(null as never, tensors), "loadStateDict graph", /not an op graph.*got null$/],
    [
      "null options",
      () => loadStateDict(graph, tensors, null as never),
      "loadStateDict options",
      /options must be an object.*got null$/,
    ],
    [
      'strict: "no"',
      () => loadStateDict(graph, tensors, { strict: "no" } as never),
      "loadStateDict options.strict",
      /must be true or false, expected a boolean, got "no"$/,
    ],
  ];
  it.each(wrong)("%s is a GraphValidationError naming the argument", (_, f, subject, message) => {
    const e = failure(f);
    expect(e).toBeInstanceOf(GraphValidationError);
    expect(e.subject).toBe(subject);
    expect(e.message).toMatch(message);
  });
});
