// The layer helpers' options: absent or an object. A string or null was read as "no options" (a string's .weights is
// undefined) or ended in a TypeError; either way the caller's mistake went unnamed.
import { GraphBuilder, GraphValidationError } from "@attngraph/graph";
import { describe, expect, it } from "vitest";
import { addLayerNorm, addLinear, addMlp } from "./layers.js";

describe("layer helpers", () => {
  it("options that are null or not an object are a GraphValidationError naming the helper", () => {
    const b = new GraphBuilder();
    const x = b.input("x", ["B", 4]);
    expect(() => addLayerNorm(b, x, "ln", null as never)).toThrow(
      /^addLayerNorm options: options must be an object.*got null$/,
    );
    expect(() => addLinear(b, x, "lin", 2, "proj" as never)).toThrow(
      /^addLinear options: options must be an object.*got "proj"$/,
    );
    expect(() => addMlp(b, x, "mlp", 8, null as never)).toThrow(GraphValidationError);
    b.output(addLinear(b, x, "lin", 2, { weights: "proj" })); // an object still works
    expect(b.build().weights.map((w) => w.name)).toEqual(["proj.weight", "proj.bias"]);
  });
});
