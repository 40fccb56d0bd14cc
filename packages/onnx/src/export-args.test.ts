// exportOnnx's arguments and options: each that is not what it should be is an OnnxExportError naming it, before
// anything is lowered. (`contrib: "bogus"` was taken as "none"; `outputs: "act"` was read letter by letter.)
import { GraphBuilder } from "@attngraph/graph";
import { Tensor } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { modelWeights } from "./decode-caches.js";
import { exportOnnx, exportOnnxWithReport } from "./export.js";
import { decodeModel } from "./proto/proto.js";
import { exportFailure } from "./test-export-failure.js";

function graph() {
  const b = new GraphBuilder();
  const x = b.input("x", ["B", 4]);
  const sum = b.add("add", "sum", { a: x, b: b.weight("bias", [4]) });
  return b.output(b.add("gelu", "act", { x: sum }, { approximate: "none" })).build();
}

const weights = { bias: Tensor.from([0, 1, 2, 3], [4]) };

describe("exportOnnx arguments", () => {
  const refused: [string, () => unknown, string, RegExp][] = [
    [
      'contrib: "bogus"',
      () => exportOnnx(graph(), weights, { contrib: "bogus" } as never),
      "options.contrib",
      /^options\.contrib: unknown contrib mode, expected "auto" or "none", got "bogus"$/,
    ],
    [
      "contrib: false",
      () => exportOnnxWithReport(graph(), weights, { contrib: false } as never),
      "options.contrib",
      /got boolean false$/,
    ],
    [
      'outputs: "act" (a string, not a list)',
      () => exportOnnx(graph(), weights, { outputs: "act" } as never),
      "options.outputs",
      /extra outputs must be node names, expected an array of strings, got "act"$/,
    ],
    [
      "outputs holding a number",
      () => exportOnnx(graph(), weights, { outputs: ["sum", 3] } as never),
      "options.outputs",
      /got an array holding number 3$/,
    ],
    [
      "graphName: 5",
      () => exportOnnx(graph(), weights, { graphName: 5 } as never),
      "options.graphName",
      /must be a non-empty string.*got number 5$/,
    ],
    ['graphName: ""', () => exportOnnx(graph(), weights, { graphName: "" }), "options.graphName", /got ""$/],
    [
      "null options",
      () => exportOnnx(graph(), weights, null as never),
      "exportOnnx options",
      /options must be an object.*got null$/,
    ],
    [
      "null weights",
      () => exportOnnx(graph(), null as never),
      "exportOnnx weights",
      /weights must be an object of tensors by name.*got null$/,
    ],
    [
      "a weight that is not a tensor",
      () => exportOnnx(graph(), { bias: { shape: [4], data: [0, 1, 2, 3] } } as never),
      "bias",
      /^bias: weight is not a tensor, expected a Tensor \[4\], got an object$/,
    ],
    [
      "a null graph",
      () => exportOnnx(null as never, weights),
      "exportOnnx graph",
      /not an op graph, expected an OpGraph, got null$/,
    ],
    ["modelWeights of a null graph", () => modelWeights(null as never), "modelWeights graph", /not an op graph/],
  ];
  it.each(refused)("%s is an OnnxExportError naming it", (_, f, subject, message) => {
    const e = exportFailure(f);
    expect(e.subject).toBe(subject);
    expect(e.message).toMatch(message);
  });

  it("the documented values still work: contrib auto and none, extra outputs, a graph name; undefined is the default", () => {
    const opsets = (contrib?: "auto" | "none") =>
      (
        decodeModel(exportOnnx(graph(), weights, contrib === undefined ? {} : { contrib }))["opset_import"] as {
          domain: string;
        }[]
      ).map((o) => o.domain);
    expect([opsets("auto"), opsets("none"), opsets(undefined)]).toEqual([
      ["", "com.microsoft"],
      [""],
      ["", "com.microsoft"],
    ]);
    const model = decodeModel(exportOnnx(graph(), weights, { outputs: ["sum"], graphName: "g" }))["graph"] as {
      name: string;
      output: { name: string }[];
    };
    expect([model.name, model.output.map((o) => o.name)]).toEqual(["g", ["act", "sum"]]);
  });
});
