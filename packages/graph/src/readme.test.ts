// The README's examples, kept runnable: if this fails, fix the README too.
import { expect, it, vi } from "vitest";
import { createOpRegistry, defineOp, fromJSON, GraphBuilder, insertAfter, toJSON } from "./index.js";

it("runs the README example with the output it shows", () => {
  const log = vi.spyOn(console, "log").mockImplementation(() => {});
  const b = new GraphBuilder();
  const x = b.input("x", ["B", "T", 8]); // [B, L, E]
  const heads = (name: string) => {
    const p = b.add("projection", name, { x, weight: b.weight(`${name}.weight`, [8, 8]) }); // [B, L, E]
    const split = b.add("reshape", `${name}.split`, { x: p }, { shape: ["B", "T", 2, 4] }); // [B, L, H, D]
    return b.add("transpose", `${name}.heads`, { x: split }, { perm: [0, 2, 1, 3] }); // [B, H, L, D]
  };
  const q = heads("queries");
  const k = heads("keys");
  const v = heads("values");
  const scores = b.add("score", "scores", { q, k }); // [B, H, L, S]
  const masked = b.add("mask", "masked", { scores }, { causal: true });
  const weights = b.add("softmax", "weights", { x: masked }, { scale: 0.5 }); // 1/sqrt(D)
  const heads2 = b.add("weighted-sum", "context.heads", { weights, v }); // [B, H, L, D]
  const merged = b.add("transpose", "context.merge", { x: heads2 }, { perm: [0, 2, 1, 3] }); // [B, L, H, D]
  const context = b.add("reshape", "context", { x: merged }, { shape: ["B", "T", 8] }); // [B, L, E]
  const output = b.add("out-proj", "output", { x: context, weight: b.weight("output.weight", [8, 8]) });
  const graph = b.output(output).build();

  console.log(graph.node("scores").shape); // [ 'B', 2, 'T', 'T' ]
  const text = JSON.stringify(toJSON(graph));
  console.log(JSON.stringify(toJSON(fromJSON(text))) === text); // true

  try {
    b.add("projection", "bad", { x, weight: b.weight("W7", [8, 7]) });
  } catch (e) {
    console.log((e as Error).message);
  }
  const printed = log.mock.calls;
  log.mockRestore();
  expect(printed).toEqual([
    [["B", 2, "T", "T"]],
    [true],
    ["bad.weight: weight columns must equal the input's last dim, expected 8, got 7 in [8, 7]"],
  ]);

  // the user-op section
  interface SoftcapAttrs {
    readonly cap: number;
  }
  const softcapOp = defineOp<SoftcapAttrs>({
    kind: "softcap",
    doc: "cap · tanh(x / cap), elementwise (logit soft-capping)",
    inputs: [{ name: "x", rank: 4, doc: "[B, H, L, S]" }],
    attrs: { cap: { type: "number", min: 0 } },
    inferShape: ([x], { cap }, ctx) => {
      if (cap === 0) ctx.fail("cap", "cap must be positive", "> 0", "0");
      return x!;
    },
  });
  const registry = createOpRegistry();
  registry.register(softcapOp);
  const g = GraphBuilder.from(graph).output("output").build(); // built-ins only: insertAfter needs the graph's own registry to know softcap
  expect(() => insertAfter(g, "scores", (bb, s) => bb.add("softcap", "scores.capped", { x: s }, { cap: 30 }))).toThrow(
    /unknown op kind/,
  );
  const withCap = fromJSON(text, registry);
  const capped = insertAfter(withCap, "scores", (bb, s) => bb.add("softcap", "scores.capped", { x: s }, { cap: 30 }));
  expect(capped.node("masked").inputs.scores).toBe("scores.capped");
  expect(() => insertAfter(withCap, "scores", (bb, s) => bb.add("softcap", "c0", { x: s }, { cap: 0 }))).toThrow(
    "c0.cap: cap must be positive, expected > 0, got 0",
  );
});
