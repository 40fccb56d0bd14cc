// The block ops under the runtime: a tiny language-model block (token embedding + a learned position embedding,
// layer norm, an MLP with GELU, a residual add, a head and the cross-entropy loss) compiled for wasm, with int32 ids
// and targets as run inputs. The session gives the numbers of the same kernels dispatched one by one (each checked
// against float64 in its own test), also where the block fusion put linear-gelu and add-layer-norm in (tapped too), and
// repeated runs leave the memory flat (int32 inputs uploaded and released like any other).
import { describe, expect, it } from "vitest";
import { GraphBuilder } from "@attngraph/graph";
import { compile } from "@attngraph/runtime";
import { Tensor } from "@attngraph/tensor";
import { onWasm, random, wasmExecutor } from "./test-util.js";

const [B, T, V, E] = [2, 6, 11, 8];

function blockGraph() {
  const b = new GraphBuilder();
  const ids = b.input("ids", [B, T], "int32");
  const targets = b.input("targets", [B, T], "int32");
  const tok = b.add("embedding", "tok", { ids, weight: b.weight("tok_embed", [V, E]) });
  const h = b.add("add", "h", { a: tok, b: b.weight("pos_embed", [1, T, E]) });
  const ln = b.add(
    "layer-norm",
    "ln",
    { x: h, weight: b.weight("ln_w", [E]), bias: b.weight("ln_b", [E]) },
    { eps: 1e-5 },
  );
  const up = b.add("projection", "up", { x: ln, weight: b.weight("W_up", [4 * E, E]) });
  const act = b.add("gelu", "act", { x: up }, { approximate: "tanh" });
  const down = b.add("projection", "down", { x: act, weight: b.weight("W_down", [E, 4 * E]) });
  const res = b.add("add", "res", { a: h, b: down });
  const logits = b.add("projection", "logits", { x: res, weight: b.weight("W_head", [V, E]) });
  b.add("cross-entropy", "loss", { logits, targets }, { ignoreIndex: -100, reduction: "mean" });
  return b.output("loss", "logits").build();
}

const weights = {
  tok_embed: random([V, E], 1),
  pos_embed: random([1, T, E], 2),
  ln_w: random([E], 3),
  ln_b: random([E], 4),
  W_up: random([4 * E, E], 5),
  W_down: random([E, 4 * E], 6),
  W_head: random([V, E], 7),
};

describe("a transformer block and its loss in a wasm session", () => {
  it("gives the kernels' numbers, with int32 ids and targets as run inputs, and keeps the memory flat", async () => {
    const wasm = await wasmExecutor();
    const session = await compile(blockGraph(), { executors: [wasm], weights });
    const ids = Tensor.int32(
      Array.from({ length: B * T }, (_, i) => (i * 5) % V),
      [B, T],
    );
    const targets = Tensor.int32(
      Array.from({ length: B * T }, (_, i) => (i % 4 === 3 ? -100 : (i * 3) % V)),
      [B, T],
    );
    // The block fusion put the fused kernels in: h → ln is one add-layer-norm (h stays a value: res reads it), up → act
    // one linear-gelu.
    expect(session.plan.steps.map((s) => s.kind)).toEqual(expect.arrayContaining(["linear-gelu", "add-layer-norm"]));
    const got = await session.run({ ids, targets });

    // The same chain, one dispatch at a time.
    const ex = await wasmExecutor();
    const tok = onWasm(ex, "embedding", {}, [ids, weights.tok_embed], [B, T, E]);
    const h = onWasm(ex, "add", {}, [tok, weights.pos_embed], [B, T, E]);
    const ln = onWasm(ex, "layer-norm", { eps: 1e-5 }, [h, weights.ln_w, weights.ln_b], [B, T, E]);
    const up = onWasm(ex, "projection", {}, [ln, weights.W_up, undefined], [B, T, 4 * E]);
    const act = onWasm(ex, "gelu", { approximate: "tanh" }, [up], [B, T, 4 * E]);
    const down = onWasm(ex, "projection", {}, [act, weights.W_down, undefined], [B, T, E]);
    const res = onWasm(ex, "add", {}, [h, down], [B, T, E]);
    const logits = onWasm(ex, "projection", {}, [res, weights.W_head, undefined], [B, T, V]);
    const loss = onWasm(ex, "cross-entropy", { ignoreIndex: -100, reduction: "mean" }, [logits, targets], []);
    expect(Array.from(got.logits!.toFloat32Array())).toEqual(Array.from(logits.toFloat32Array()));
    expect(Array.from(got.loss!.toFloat32Array())).toEqual(Array.from(loss.toFloat32Array()));
    expect(Number.isFinite(got.loss!.toFloat32Array()[0]!)).toBe(true);

    await session.run({ ids, targets }); // warm-up done: arenas pooled
    const bytes = wasm.memory.buffer.byteLength;
    const inUse = wasm.inUseBytes;
    for (let i = 0; i < 10; i++) {
      const out = await session.run({ ids, targets });
      expect(Array.from(out.loss!.toFloat32Array())).toEqual(Array.from(loss.toFloat32Array()));
      expect(wasm.memory.buffer.byteLength).toBe(bytes);
      expect(wasm.inUseBytes).toBe(inUse);
    }
    await session.dispose();
    expect(wasm.inUseBytes).toBe(0);

    // Tapped, h and ln (slices of the fused step's [sum | norm]) are the unfused kernels' values, bit for bit.
    const tapped = await compile(blockGraph(), { executors: [await wasmExecutor()], weights });
    const seen = new Map<string, Tensor>();
    tapped.tap(["h", "ln"]).subscribe((e) => seen.set(e.node, e.tensor));
    const again = await tapped.run({ ids, targets });
    expect(Array.from(seen.get("h")!.toFloat32Array())).toEqual(Array.from(h.toFloat32Array()));
    expect(Array.from(seen.get("ln")!.toFloat32Array())).toEqual(Array.from(ln.toFloat32Array()));
    expect(Array.from(again.loss!.toFloat32Array())).toEqual(Array.from(loss.toFloat32Array()));
    await tapped.dispose();
  });

  it("an out-of-range id fails the run naming the node and position; the session goes on working", async () => {
    const session = await compile(blockGraph(), { executors: [await wasmExecutor()], weights });
    const targets = Tensor.int32(new Array<number>(B * T).fill(0), [B, T]);
    const bad = Tensor.int32(
      Array.from({ length: B * T }, (_, i) => (i === 7 ? V : 0)),
      [B, T],
    );
    const e = await session.run({ ids: bad, targets }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(String((e as Error).message)).toMatch(
      /tok\.ids: token id out of range, expected token id in \[0, 11\), got 11 at \[1, 1\]/,
    );
    const ok = await session.run({ ids: Tensor.int32(new Array<number>(B * T).fill(1), [B, T]), targets });
    expect(Number.isFinite(ok.loss!.toFloat32Array()[0]!)).toBe(true);
    await session.dispose();
  });
});
