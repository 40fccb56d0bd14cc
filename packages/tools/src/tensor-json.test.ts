// Tensors through JSON: exact float32 values, the non-finite ones JSON has no literal for, int32, and malformed documents.
import { Tensor } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { ReproFormatError, tensorFromJSON, tensorToJSON } from "./tensor-json.js";

describe("tensor JSON", () => {
  it("round-trips float32 values exactly, NaN and ±∞ included, and int32", () => {
    const t = Tensor.from([0.1, -1 / 3, 1e-38, NaN, Infinity, -Infinity, 3.4e38], [7]);
    const back = tensorFromJSON(JSON.parse(JSON.stringify(tensorToJSON(t))), "$");
    expect(Array.from(back.toFloat32Array())).toEqual(Array.from(t.toFloat32Array()));
    const ids = Tensor.int32([1, -2, 2147483647], [3, 1]);
    const idsBack = tensorFromJSON(JSON.parse(JSON.stringify(tensorToJSON(ids))), "$");
    expect([idsBack.dtype, idsBack.shape, Array.from(idsBack.toInt32Array())]).toEqual([
      "int32",
      [3, 1],
      [1, -2, 2147483647],
    ]);
  });

  it.each([
    [{ shape: [2], data: [1] }, "$.t.data", /2 values/],
    [{ shape: [2], data: [1, "nan"] }, "$.t.data[1]", /"nan"/],
    [{ shape: [1], dtype: "int32", data: [1.5] }, "$.t.data[0]", /int32/],
    [{ shape: [1], dtype: "float16", data: [1] }, "$.t.dtype", /float16/],
    [{ shape: [-1], data: [] }, "$.t.shape", /integers/],
    [{ shape: [1], data: [1], extra: 1 }, "$.t.extra", /unknown field/],
    [[1, 2], "$.t", /not a tensor/],
  ])("%j is a ReproFormatError at %s", (json, path, message) => {
    const e = (() => {
      try {
        tensorFromJSON(json, "$.t");
      } catch (err) {
        return err;
      }
    })();
    expect(e).toBeInstanceOf(ReproFormatError);
    expect((e as ReproFormatError).subject).toBe(path);
    expect((e as ReproFormatError).message).toMatch(message);
  });
});
