// Calls the module could not take, refused before it runs: a dim attribute still a name, an ignoreIndex or a table's
// rows past the module's i32 (each now a rule of the op's declaration, which dispatch's checkCall holds calls to), and
// an input that is not a wasm value (the executor's own check; an int32 value through a view op: int32.test.ts). Each
// error keeps its code and `<node>.<field>`.
import { describe, expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { thrownError } from "@attngraph/testkit/test-helpers";
import { random, wasmExecutor } from "../test-util.js";
import { failingCall } from "../test-dispatch.js";

const ex = await wasmExecutor();

describe("calls the module could not take", () => {
  it("a dim attribute still a name (rope's positionOffset, position-embedding's offset) is an unbound call", () => {
    const rope = failingCall(ex, "rope", "q.rope", [1, 1, 2, 4]);
    const e = rope({ positionOffset: "P" }, [random([1, 1, 2, 4], 1)]);
    expect([e.code, e.subject]).toEqual(["attr", "q.rope.positionOffset"]);
    expect(e.message).toMatch(/unbound dim name/);
    const wpe = failingCall(ex, "position-embedding", "wpe", [2, 3]);
    const f = wpe({ offset: "N" }, [Tensor.int32([0, 1], [1, 2]), random([4, 3], 2)]);
    expect([f.code, f.subject]).toEqual(["attr", "wpe.offset"]);
    const grad = failingCall(ex, "position-embedding-grad", "wpe.grad", [4, 3]);
    const g = grad({ rows: 4, offset: "N" }, [random([2, 3], 3)]);
    expect([g.code, g.subject]).toEqual(["attr", "wpe.grad.offset"]);
  });

  it("an ignoreIndex past int32 (the module takes it as an i32) is an attribute error", () => {
    const logits = random([2, 3], 4);
    const targets = Tensor.int32([0, 2], [2]);
    for (const [kind, outShape] of [
      ["cross-entropy", []],
      ["cross-entropy-grad", [2, 3]],
    ] as const) {
      for (const ignoreIndex of [2 ** 31, -(2 ** 31) - 1]) {
        const e = failingCall(ex, kind, "loss", outShape)({ ignoreIndex }, [logits, targets]);
        expect([e.code, e.subject], `${kind} ${ignoreIndex}`).toEqual(["attr", "loss.ignoreIndex"]);
      }
    }
  });

  it("a table of 2^31 rows or more (the module counts rows with an i32) is an attribute error", () => {
    const emb = failingCall(ex, "embedding-grad", "wte.grad", [2 ** 31, 3]);
    const e = emb({ rows: 2 ** 31 }, [Tensor.int32([0, 1], [2]), random([2, 3], 5)]);
    expect([e.code, e.subject]).toEqual(["attr", "wte.grad.rows"]);
    const pos = failingCall(ex, "position-embedding-grad", "wpe.grad", [2 ** 31, 3]);
    const f = pos({ rows: 2 ** 31, offset: 0 }, [random([2, 3], 6)]);
    expect([f.code, f.subject]).toEqual(["attr", "wpe.grad.rows"]);
  });

  it("an input that is not a wasm value (a host tensor dispatched by hand) is an input error", () => {
    const x = random([2, 3], 7);
    const e = thrownError(() =>
      ex.dispatch({ kind: "softmax", node: "sm", attrs: {}, inputs: [x as never], outShape: [2, 3] }),
    );
    expect(AttnGraphError.isInstance(e)).toBe(true);
    expect([e.code, e.subject]).toEqual(["input", "sm.x"]);
    expect(e.message).toMatch(/is not a wasm value/);
  });
});
