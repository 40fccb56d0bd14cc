// embedding-grad on wasm against a float64 scatter-add written here: repeated ids accumulate, rows no id names stay 0,
// ids of any rank, strided ids and grad, E of every length mod 4; an id outside [0, V) is the forward embedding's
// "input" error naming the node, the position and the id, thrown before anything is written, and the executor (and a
// session) stays usable afterwards.
import { describe, expect, it } from "vitest";
import { GraphBuilder } from "@attngraph/graph";
import { compile } from "@attngraph/runtime";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { f64, onWasm, onWasmViews, random, thrown, uploadView, wasmExecutor, worst } from "../test-util.js";
import { failsUntouched } from "../test-dispatch.js";

const ex = await wasmExecutor();

/** zeros [V, E], then out[ids[p], :] += grad[p, :] for every position p, in float64. */
function embeddingGrad64(ids: Tensor<"int32">, grad: Tensor, v: number): Float64Array {
  const e = grad.shape[grad.rank - 1]!;
  const g = f64(grad);
  const out = new Float64Array(v * e);
  ids.toInt32Array().forEach((id, p) => {
    for (let j = 0; j < e; j++) out[id * e + j]! += g[p * e + j]!;
  });
  return out;
}

const run = (ids: Tensor<"int32">, g: Tensor, v: number, views = false) =>
  (views ? onWasmViews : onWasm)(ex, "embedding-grad", { rows: v }, [ids, g], [v, g.shape[g.rank - 1]!]);
const expectGrad = (got: Tensor, ids: Tensor<"int32">, g: Tensor, v: number) => {
  expect(got.shape).toEqual([v, g.shape[g.rank - 1]!]);
  expect(worst(got, new Tensor(Float32Array.from(embeddingGrad64(ids, g, v)), got.shape), 1e-6, 1e-6)).toBeLessThan(1);
};

describe("embedding-grad on wasm", () => {
  it("repeated ids accumulate, unnamed rows are 0; E of every length mod 4", () => {
    const ids = Tensor.int32([6, 0, 2, 2, 1, 6, 3, 3, 6, 6], [2, 5]);
    for (const e of [1, 3, 4, 5, 33]) {
      const g = random([2, 5, e], e);
      const got = run(ids, g, 9);
      expectGrad(got, ids, g, 9);
      expect(Array.from(got.toFloat32Array().subarray(4 * e, 6 * e)).every((x) => x === 0)).toBe(true); // rows 4, 5
      expect(Array.from(got.toFloat32Array().subarray(7 * e)).every((x) => x === 0)).toBe(true); // rows 7, 8
    }
    // the same id everywhere: one row holds the sum of every grad row
    const same = Tensor.int32(new Array<number>(40).fill(2), [40]);
    const g = random([40, 6], 7);
    expectGrad(run(same, g, 3), same, g, 3);
  });

  it("ids of rank 0, 1 and 3", () => {
    for (const ids of [
      Tensor.int32([4], []),
      Tensor.int32([0, 1, 2, 3, 4, 4], [6]),
      Tensor.int32([1, 2, 3, 4, 0, 1, 2, 3], [2, 2, 2]),
    ]) {
      const g = random([...ids.shape, 6], ids.size);
      expectGrad(run(ids, g, 5), ids, g, 5);
    }
  });

  it("strided ids and a strided (transposed) grad", () => {
    const ids = Tensor.int32([8, 0, 3, 5, 5, 1, 2, 7, 4, 6, 0, 8], [4, 3]).transpose(0, 1); // [3, 4]
    const g = random([6, 3, 4], 2).permute([1, 2, 0]); // [3, 4, 6], strided along E
    expectGrad(run(ids, g, 9, true), ids, g, 9);
    const g2 = random([4, 3, 6], 3).permute([1, 0, 2]); // rows strided, E contiguous
    expectGrad(run(ids, g2, 9, true), ids, g2, 9);
  });

  it("an id outside [0, V) is the forward kernel's error naming the node, the position and the id; nothing is written", () => {
    const g = ex.upload(random([2, 3, 4], 3));
    for (const bad of [5, -1, 2 ** 31 - 1, -(2 ** 31)]) {
      const ids = ex.upload(Tensor.int32([0, 1, 2, bad, 0, 4], [2, 3]));
      const op = { kind: "embedding-grad", node: "tok_embed.grad", attrs: { rows: 5 }, outShape: [5, 4] };
      const e = failsUntouched(ex, op, [ids, g]);
      expect([e.code, e.subject]).toEqual(["input", "tok_embed.grad.ids"]);
      expect(e.message).toBe(
        `tok_embed.grad.ids: token id out of range, expected token id in [0, 5), got ${bad} at [1, 0]`,
      );
      ex.release(ids);
    }
    // strided ids: the position is the one in the ids' own (logical) shape
    const strided = uploadView(ex, Tensor.int32([0, 1, 2, 3, 9, 4], [3, 2]).transpose(0, 1)); // [[0, 2, 9], [1, 3, 4]]
    const e = thrown(() =>
      ex.dispatch({
        kind: "embedding-grad",
        node: "emb.grad",
        attrs: { rows: 5 },
        inputs: [strided, g],
        outShape: [5, 4],
      }),
    ) as Error;
    expect(e.message).toMatch(/^emb\.grad\.ids: token id out of range, .* got 9 at \[0, 2\]$/);
    // the executor is still usable, with the same numbers
    const ids = Tensor.int32([0, 1, 2, 3, 0, 4], [2, 3]);
    const gh = random([2, 3, 4], 3);
    expectGrad(run(ids, gh, 5), ids, gh, 5);
    expect(ex.stats.traps).toBe(0);
  });

  it("a session run with a bad id fails naming the node; the next run works", async () => {
    const b = new GraphBuilder();
    const ids = b.input("ids", ["B", "T"], "int32");
    const grad = b.input("grad", ["B", "T", 4]);
    const graph = b.output(b.add("embedding-grad", "tok_embed.grad", { ids, grad }, { rows: 5 })).build();
    const wasm = await wasmExecutor();
    const session = await compile(graph, { executors: [wasm] });
    const good = { ids: Tensor.int32([0, 4, 4, 1, 2, 0], [2, 3]), grad: random([2, 3, 4], 1) };
    const first = (await session.run(good))["tok_embed.grad"]!;
    expectGrad(first, good.ids, good.grad, 5);
    const err = await session.run({ ...good, ids: Tensor.int32([0, 4, 5, 1, 2, 0], [2, 3]) }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(String(err)).toContain("tok_embed.grad");
    const cause = (err as { cause?: unknown }).cause ?? err;
    expect(AttnGraphError.isInstance(cause) && cause.code).toBe("input");
    expect((cause as Error).message).toContain("got 5 at [0, 2]");
    const after = (await session.run(good))["tok_embed.grad"]!;
    expect(worst(after, first, 0, 0)).toBe(0);
    await session.dispose();
  });

  it("float32 ids, a grad of the wrong rank or dims, a bad rows attribute: typed errors naming the field", () => {
    const call = (inputs: unknown[], attrs: Record<string, unknown> = { rows: 5 }) =>
      thrown(() =>
        ex.dispatch({ kind: "embedding-grad", node: "emb.grad", attrs, inputs: inputs as never, outShape: [5, 4] }),
      ) as AttnGraphError;
    const ids = ex.upload(Tensor.int32([0, 1], [2]));
    const g = ex.upload(random([2, 4], 1));
    expect(call([ex.upload(Tensor.from([0, 1], [2])), g]).message).toBe(
      "emb.grad.ids: input 0 (ids) of op embedding-grad has the wrong dtype, expected int32, got float32",
    );
    expect([call([ids, ex.upload(random([8], 1))]).code, call([ids, ex.upload(random([8], 1))]).subject]).toEqual([
      "shape",
      "emb.grad.grad",
    ]);
    expect(call([ids, ex.upload(random([3, 4], 1))]).subject).toBe("emb.grad.grad");
    for (const rows of [0, -1, 2.5, "5", undefined])
      expect([call([ids, g], { rows }).code, call([ids, g], { rows }).subject]).toEqual(["attr", "emb.grad.rows"]);
  });
});
