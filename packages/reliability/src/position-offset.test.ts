// A position embedding whose offset is a dim name (a decode graph's N) is bound per run, on every executor: token
// embeddings plus positions N..N+T-1 of the table, exactly, and N past the table refused naming the node.
import { GraphBuilder } from "@attngraph/graph";
import { compile } from "@attngraph/runtime";
import { Tensor } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { executors } from "./executors.js";
import { prng, uniform } from "./prng.js";

const [P, E] = [9, 5];
const next = prng(7);
const table = new Tensor(uniform(P * E, 1, next), [P, E]);
const wte = new Tensor(uniform(6 * E, 1, next), [6, E]);

describe.each(executors.map((e) => [e.name, e] as const))("%s: a position offset bound per run", (_name, entry) => {
  it("token embeddings plus positions N..N+T-1, and N past the table refused", async () => {
    const b = new GraphBuilder();
    b.input("ids", ["B", "T"], "int32");
    b.weight("wte", [6, E]);
    b.weight("wpe", [P, E]);
    const tok = b.add("embedding", "tok", { ids: "ids", weight: "wte" });
    const pos = b.add("position-embedding", "pos", { ids: "ids", weight: "wpe" }, { offset: "N" });
    const g = b.output(b.add("add", "x", { a: tok, b: pos })).build();
    const session = await compile(g, { executors: [await entry.create()], weights: { wte, wpe: table } });
    const ids = Tensor.int32([1, 5, 0, 2, 2, 3], [2, 3]);
    for (const n of [0, 4, P - 3]) {
      const x = (await session.run({ ids }, { dims: { N: n } })).x!;
      const want = Array.from(ids.toInt32Array()).flatMap((id, k) =>
        Array.from({ length: E }, (_, j) =>
          Math.fround(wte.toFloat32Array()[id * E + j]! + table.toFloat32Array()[(n + (k % 3)) * E + j]!),
        ),
      );
      expect(Array.from(x.toFloat32Array()), `N = ${n}`).toEqual(want);
    }
    await expect(session.run({ ids }, { dims: { N: P - 2 } })).rejects.toThrow(
      /pos\.offset: positions 7\.\.9 run past the table's P rows/,
    );
    await session.dispose();
  });
});
