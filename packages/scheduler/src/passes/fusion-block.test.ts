import { GraphBuilder, type OpGraph, type Ref } from "@attngraph/graph";
import { describe, expect, it } from "vitest";
import { explain } from "../explain.js";
import { lower } from "../lower.js";
import { fakeExecutor } from "../test-executors.js";

/**
 * The residual stream of a pre-norm block as @attngraph/nn builds it (the scheduler may not depend on that package:
 * nn's tests run on the runtime, which depends on the scheduler), with the attention replaced by one projection:
 * ln1 → attention → residual = x + attention → ln2 → mlp.hidden → mlp.gelu → mlp → output = residual + mlp.
 */
function addBlock(b: GraphBuilder, x: Ref, p: string, e: number): Ref {
  const ln = (name: string, v: Ref) =>
    b.add("layer-norm", `${p}${name}`, {
      x: v,
      weight: b.weight(`${p}${name}.weight`, [e]),
      bias: b.weight(`${p}${name}.bias`, [e]),
    });
  const attention = b.add("projection", `${p}attention`, {
    x: ln("ln1", x),
    weight: b.weight(`${p}attention.w`, [e, e]),
  });
  const residual = b.add("add", `${p}residual`, { a: x, b: attention });
  const hidden = b.add("projection", `${p}mlp.hidden`, {
    x: ln("ln2", residual),
    weight: b.weight(`${p}mlp.0.weight`, [4 * e, e]),
    bias: b.weight(`${p}mlp.0.bias`, [4 * e]),
  });
  const gelu = b.add("gelu", `${p}mlp.gelu`, { x: hidden });
  const mlp = b.add("projection", `${p}mlp`, {
    x: gelu,
    weight: b.weight(`${p}mlp.2.weight`, [e, 4 * e]),
    bias: b.weight(`${p}mlp.2.bias`, [e]),
  });
  return b.add("add", `${p}output`, { a: residual, b: mlp });
}

function blockGraph(): OpGraph {
  const b = new GraphBuilder();
  return b.output(addBlock(b, b.input("x", ["B", "T", 16]), "", 16)).build();
}

/** embed + pos → two blocks, as simpleTransformer lays them out. */
function modelGraph(): OpGraph {
  const b = new GraphBuilder();
  const embedded = b.add("embedding", "embed", {
    ids: b.input("tokens", ["B", 4], "int32"),
    weight: b.weight("embed.weight", [10, 8]),
  });
  let x = b.add("add", "embed.pos", { a: embedded, b: b.weight("pos_embed", [1, 4, 8]) });
  for (const p of ["transformer.0.", "transformer.1."]) x = addBlock(b, x, p, 8);
  return b.output(x).build();
}

const block = blockGraph();
const cpu = () => fakeExecutor("cpu", "all");

describe("block fusion pass", () => {
  it("untapped: projection + gelu → linear-gelu, add + layer-norm → add-layer-norm with both values kept as views", () => {
    const plan = lower(block, { executors: [cpu()] });
    const lg = plan.steps.find((s) => s.kind === "linear-gelu")!;
    expect(lg.node).toBe("mlp.gelu");
    expect(lg.fused).toEqual(["mlp.hidden", "mlp.gelu"]);
    expect(lg.inputs).toEqual(["ln2", "mlp.0.weight", "mlp.0.bias"]);
    expect(plan.steps.some((s) => s.node === "mlp.hidden")).toBe(false);
    const aln = plan.steps.find((s) => s.kind === "add-layer-norm")!;
    expect(aln.node).toBe("residual+ln2");
    expect(aln.inputs).toEqual(["x", "attention", "ln2.weight", "ln2.bias"]);
    expect(aln.shape).toEqual(["B", "T", 32]);
    for (const [node, start] of [
      ["residual", 0],
      ["ln2", 16],
    ] as const) {
      const s = plan.steps.find((p) => p.node === node)!;
      expect([s.kind, s.layout, s.inputs[0], s.attrs]).toEqual([
        "slice",
        "view",
        "residual+ln2",
        { axis: -1, start, size: 16 },
      ]);
    }
    const text = explain(plan);
    expect(text).toContain(
      "pass block fusion: fused mlp.hidden + mlp.gelu → linear-gelu; residual + ln2 → add-layer-norm (both kept as views of residual+ln2)",
    );
    // the fused step sits where the add was, before anything reads its slices
    const names = plan.steps.map((s) => s.node);
    expect(names.indexOf("residual+ln2")).toBeLessThan(names.indexOf("residual"));
    expect(names.indexOf("ln2")).toBeLessThan(names.indexOf("mlp.gelu"));
  });

  it("a tap on the pre-activation keeps projection → gelu and says why; a tap on the sum or the norm does not block add → layer-norm", () => {
    const plan = lower(block, { executors: [cpu()], watched: ["mlp.hidden", "residual", "ln2"] });
    expect(plan.steps.some((s) => s.kind === "linear-gelu")).toBe(false);
    expect(plan.steps.find((s) => s.node === "mlp.hidden")!.kind).toBe("projection");
    expect(plan.steps.some((s) => s.kind === "add-layer-norm")).toBe(true);
    expect(plan.passes.find((p) => p.pass === "block fusion")!.summary).toContain(
      "kept unfused: mlp.gelu (mlp.hidden is tapped)",
    );
  });

  it("a patched pre-activation or residual sum keeps its pair (the fused step would read around the override); a patched norm does not", () => {
    const plan = lower(block, { executors: [cpu()], patched: ["mlp.hidden", "residual"] });
    expect(plan.steps.some((s) => s.kind === "linear-gelu" || s.kind === "add-layer-norm")).toBe(false);
    const summary = plan.passes.find((p) => p.pass === "block fusion")!.summary;
    expect(summary).toContain("mlp.gelu (mlp.hidden is patched)");
    expect(summary).toContain("ln2 (residual is patched: the fused step would normalise the sum before the override)");
    expect(lower(block, { executors: [cpu()], patched: ["ln2"] }).steps.some((s) => s.kind === "add-layer-norm")).toBe(
      true,
    );
    expect(() => lower(block, { executors: [cpu()], patched: ["nope"] })).toThrow(
      /override nope: no node of this name/,
    );
  });

  it("without fused kernels, or with a node placed by the user, the pairs stay, and explain() says why", () => {
    const noKernels = lower(block, {
      executors: [fakeExecutor("cpu", "all", { "linear-gelu": "no", "add-layer-norm": "no" })],
    });
    expect(noKernels.steps.some((s) => s.kind === "linear-gelu" || s.kind === "add-layer-norm")).toBe(false);
    const summary = noKernels.passes.find((p) => p.pass === "block fusion")!.summary;
    expect(summary).toBe(
      "nothing fused; kept unfused: mlp.gelu (no executor has a linear-gelu kernel); ln2 (no executor has an add-layer-norm kernel)",
    );
    const pinned = lower(block, { executors: [cpu(), fakeExecutor("wasm", "all")], placement: { ln2: "wasm" } });
    expect(pinned.steps.some((s) => s.kind === "add-layer-norm")).toBe(false);
    expect(pinned.passes.find((p) => p.pass === "block fusion")!.summary).toContain("ln2 (ln2 is placed by the user)");
  });

  it("in a model every residual stream add that feeds a layer norm fuses: embed + pos → ln1, and each block's output → the next ln1", () => {
    const plan = lower(modelGraph(), { executors: [cpu()] });
    const fused = plan.steps.filter((s) => s.kind === "add-layer-norm").map((s) => s.node);
    expect(fused).toEqual([
      "embed.pos+transformer.0.ln1",
      "transformer.0.residual+transformer.0.ln2",
      "transformer.0.output+transformer.1.ln1",
      "transformer.1.residual+transformer.1.ln2",
    ]);
    expect(plan.steps.filter((s) => s.kind === "linear-gelu")).toHaveLength(2);
  });

  it("fusion: false keeps every node", () => {
    const plan = lower(block, { executors: [cpu()], fusion: false });
    expect(plan.steps.map((s) => s.node)).toEqual(block.nodes.map((n) => n.name));
  });
});
