// embedding on wasm against a row gather written here: ids of any rank (scalar included), repeated ids, strided ids
// and a strided (transposed) table; every id is checked before anything is written (an out of range id is an "input"
// error naming the node, the position and the id, and a planned output keeps its contents); dtypes both ways.
import { describe, expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import { f64, onWasm, onWasmViews, random, thrown, uploadView, wasmExecutor } from "../test-util.js";
import { failsUntouched } from "../test-dispatch.js";

const ex = await wasmExecutor();

/** out[k, :] = table[ids[k], :], row-major, in float64. */
function embedding64(ids: Tensor<"int32">, table: Tensor): Float64Array {
  const [, e] = table.shape as [number, number];
  const t = f64(table);
  const idv = ids.toInt32Array();
  const out = new Float64Array(idv.length * e);
  idv.forEach((id, k) => out.set(t.subarray(id * e, id * e + e), k * e));
  return out;
}

const expectRows = (got: Tensor, ids: Tensor<"int32">, table: Tensor) => {
  expect(got.shape).toEqual([...ids.shape, table.shape[1]!]);
  expect(Array.from(got.toFloat32Array())).toEqual(Array.from(Float32Array.from(embedding64(ids, table))));
};

describe("embedding on wasm", () => {
  it("ids [B, T] pick rows of [V, E], repeated ids included; E of every length mod 4", () => {
    for (const e of [1, 3, 4, 33]) {
      const table = random([7, e], e);
      const ids = Tensor.int32([6, 0, 2, 2, 1, 6, 3, 3], [2, 4]);
      expectRows(onWasm(ex, "embedding", {}, [ids, table], [2, 4, e]), ids, table);
    }
  });

  it("ids of rank 0, 1 and 3", () => {
    const table = random([5, 6], 1);
    for (const ids of [
      Tensor.int32([4], []),
      Tensor.int32([0, 1, 2, 3, 4], [5]),
      Tensor.int32([1, 2, 3, 4, 0, 1, 2, 3], [2, 2, 2]),
    ]) {
      expectRows(onWasm(ex, "embedding", {}, [ids, table], [...ids.shape, 6]), ids, table);
    }
  });

  it("strided ids and a transposed table (weight tying: the output projection's [E, V] seen as [V, E])", () => {
    const table = random([6, 9], 2).transpose(0, 1); // [9, 6]: rows strided by 9
    const ids = Tensor.int32([8, 0, 3, 5, 5, 1, 2, 7, 4, 6, 0, 8], [4, 3]).transpose(0, 1); // [3, 4] strided
    expectRows(onWasmViews(ex, "embedding", {}, [ids, table], [3, 4, 6]), ids, table);
  });

  it("an id outside [0, V) is an error naming the node, the position and the id, before anything is written", () => {
    const table = ex.upload(random([5, 4], 3));
    for (const [bad, at] of [
      [5, "[1, 0]"],
      [-1, "[1, 0]"],
      [2 ** 31 - 1, "[1, 0]"],
      [-(2 ** 31), "[1, 0]"],
    ] as const) {
      const ids = ex.upload(Tensor.int32([0, 1, 2, bad, 0, 7], [2, 3]));
      const op = { kind: "embedding", node: "tok_embed", attrs: {}, outShape: [2, 3, 4] };
      const e = failsUntouched(ex, op, [ids, table]);
      expect([e.code, e.subject]).toEqual(["input", "tok_embed.ids"]);
      expect(e.message).toBe(`tok_embed.ids: token id out of range, expected token id in [0, 5), got ${bad} at ${at}`);
      ex.release(ids);
    }
    // strided ids: the position is the one in the ids' own (logical) shape
    const strided = uploadView(ex, Tensor.int32([0, 1, 2, 3, 9, 4], [3, 2]).transpose(0, 1)); // [[0, 2, 9], [1, 3, 4]]
    const e = thrown(() =>
      ex.dispatch({ kind: "embedding", node: "tok_embed", attrs: {}, inputs: [strided, table], outShape: [2, 3, 4] }),
    ) as Error;
    expect(e.message).toMatch(/got 9 at \[0, 2\]$/);
  });

  it("float32 ids, an int32 table, a table not [V, E]: typed errors naming the field", () => {
    const table = ex.upload(random([5, 4], 4));
    const call = (inputs: unknown[], outShape = [2, 4]) =>
      thrown(() =>
        ex.dispatch({ kind: "embedding", node: "tok_embed", attrs: {}, inputs: inputs as never, outShape }),
      ) as Error;
    expect(call([ex.upload(Tensor.from([0, 1], [2])), table]).message).toBe(
      "tok_embed.ids: input 0 (ids) of op embedding has the wrong dtype, expected int32, got float32",
    );
    expect(call([ex.upload(Tensor.int32([0, 1], [2])), ex.upload(Tensor.int32([1, 2, 3, 4], [2, 2]))]).message).toMatch(
      /^tok_embed\.weight: .*wrong dtype, expected float32, got int32/,
    );
    expect(call([ex.upload(Tensor.int32([0, 1], [2])), ex.upload(random([20], 1))]).message).toMatch(
      /^tok_embed\.weight: input must have rank 2/,
    );
  });

  it("an empty table V = 0 refuses every id; no ids at all gives an empty output", () => {
    const e = thrown(() =>
      onWasm(ex, "embedding", {}, [Tensor.int32([0], [1]), random([0, 4], 1)], [1, 4], "emb"),
    ) as Error;
    expect(e.message).toMatch(/^emb\.ids: token id out of range, expected token id in \[0, 0\), got 0 at \[0\]/);
    expect(onWasm(ex, "embedding", {}, [Tensor.int32([], [0]), random([3, 4], 1)], [0, 4]).shape).toEqual([0, 4]);
  });
});
