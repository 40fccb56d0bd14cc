// position-embedding and its gradient on wasm: rows offset..offset+T-1 copied bit for bit (a plain and a transposed
// table), T from the ids' last dim (their values never read), the grad placed into a zero table, a named offset bound
// per run by the runtime, and positions past the table refused on the host naming the node, before anything is written.
import { describe, expect, it } from "vitest";
import { type AttnGraphError, Tensor } from "@attngraph/tensor";
import { onWasm, onWasmViews, random, thrown, wasmExecutor } from "../test-util.js";
import { failsUntouched } from "../test-dispatch.js";
import { positionCases, tableRows } from "@attngraph/testkit";

const ex = await wasmExecutor();
const P = 9;
const E = 5;
const table = random([P, E], 7);

describe("position-embedding on wasm", () => {
  it("copies rows offset..offset+T-1 exactly; ids of any rank, their values unread", () => {
    for (const [ids, offset] of positionCases(P)) {
      const t = ids.shape.at(-1)!;
      const got = onWasm(ex, "position-embedding", { offset }, [ids, table], [t, E]);
      expect(got.shape).toEqual([t, E]);
      expect(Array.from(got.toFloat32Array())).toEqual(tableRows(table, offset, t));
    }
  });

  it("reads a transposed table (strided rows) and strided ids", () => {
    const tT = random([E, P], 8).transpose(0, 1); // [P, E], rows strided by 1, columns by P
    const ids = Tensor.int32([0, 0, 0, 0, 0, 0], [3, 2]).transpose(0, 1); // [2, 3]
    const got = onWasmViews(ex, "position-embedding", { offset: 4 }, [ids, tT], [3, E]);
    expect(Array.from(got.toFloat32Array())).toEqual(tableRows(tT, 4, 3));
  });

  it("the gradient puts grad rows at offset.. of a zero [P, E] (a planned output's garbage overwritten)", () => {
    const g = random([3, E], 9);
    const out = ex.upload(Tensor.from(new Array<number>(P * E).fill(42), [P, E]));
    const got = ex.download(
      ex.dispatch({
        kind: "position-embedding-grad",
        node: "wpe.grad",
        attrs: { rows: P, offset: 2 },
        inputs: [ex.upload(g)],
        outShape: [P, E],
        out,
      }),
    );
    const want = new Array<number>(P * E).fill(0);
    want.splice(2 * E, 3 * E, ...g.toFloat32Array());
    expect(Array.from(got.toFloat32Array())).toEqual(want);
    const strided = onWasmViews(
      ex,
      "position-embedding-grad",
      { rows: 3, offset: 0 },
      [random([E, 3], 10).transpose(0, 1)],
      [3, E],
    );
    expect(Array.from(strided.toFloat32Array())).toEqual(tableRows(random([E, 3], 10).transpose(0, 1), 0, 3));
  });

  it("positions past the table are an error naming the node, before anything is written", () => {
    const op = { kind: "position-embedding", node: "wpe", attrs: { offset: 7 }, outShape: [3, E] };
    const e = failsUntouched(ex, op, [ex.upload(Tensor.int32([0, 0, 0], [3])), ex.upload(table)]);
    expect([e.code, e.subject, e.expected, e.got]).toEqual(["attr", "wpe.offset", "offset + T <= P = 9", "7 + 3 = 10"]);
    const g = thrown(() =>
      onWasm(ex, "position-embedding-grad", { rows: 4, offset: 2 }, [random([3, E], 1)], [4, E], "wpe.grad"),
    ) as AttnGraphError;
    expect(g.subject).toBe("wpe.grad.offset");
    expect(
      (
        thrown(() =>
          onWasm(ex, "position-embedding", { offset: "N" }, [Tensor.int32([0], [1]), table], [1, E], "wpe"),
        ) as AttnGraphError
      ).code,
    ).toBe("attr");
  });
});
