// The fused block kernels under the runtime: a pre-norm transformer block's residual stream (ln1 → a projection
// standing in for attention → residual = x + attention → ln2 → mlp.hidden → gelu → mlp → output = residual + mlp),
// compiled for webgpu. Untapped, the scheduler runs linear-gelu and add-layer-norm here (residual and ln2 become views
// of the fused output); the numbers must be those of the same session on an executor without the fused kernels (the
// unfused pairs) to the contract's 1e-6, and those of the CPU executor to the kernels' tolerance. Taps on residual and
// ln2 see the fused output's halves; a tap on the pre-activation keeps projection → gelu.
import { afterAll, describe, expect, it } from "vitest";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { GraphBuilder, type OpGraph } from "@attngraph/graph";
import { compile, type Session } from "@attngraph/runtime";
import { compare, type Tensor } from "@attngraph/tensor";
import { createWebGpuExecutor, webgpuKernels } from "./index.js";
import { randomTensor } from "./test-helpers.js";

const [B, T, E] = [2, 3, 8];

function blockGraph(): OpGraph {
  const b = new GraphBuilder();
  const x = b.input("x", ["B", T, E]);
  const ln = (name: string, v: typeof x) =>
    b.add(
      "layer-norm",
      name,
      { x: v, weight: b.weight(`${name}.weight`, [E]), bias: b.weight(`${name}.bias`, [E]) },
      { eps: 1e-5 },
    );
  const attention = b.add("projection", "attention", { x: ln("ln1", x), weight: b.weight("attention.w", [E, E]) });
  const residual = b.add("add", "residual", { a: x, b: attention });
  const hidden = b.add("projection", "mlp.hidden", {
    x: ln("ln2", residual),
    weight: b.weight("mlp.0.weight", [4 * E, E]),
    bias: b.weight("mlp.0.bias", [4 * E]),
  });
  const gelu = b.add("gelu", "mlp.gelu", { x: hidden }, { approximate: "none" });
  const mlp = b.add("projection", "mlp", {
    x: gelu,
    weight: b.weight("mlp.2.weight", [E, 4 * E]),
    bias: b.weight("mlp.2.bias", [E]),
  });
  return b.output(b.add("add", "output", { a: residual, b: mlp })).build();
}

const graph = blockGraph();
const weights = Object.fromEntries(
  graph.weights.map((w, i) => [w.name, randomTensor(w.shape as number[], 300 + i, 0.5)]),
);
const x = randomTensor([B, T, E], 399, 2);

const webgpu = createWebGpuExecutor();
const unfusedGpu = createWebGpuExecutor({
  kernels: webgpuKernels.filter(([kind]) => kind !== "linear-gelu" && kind !== "add-layer-norm"),
});
const sessions: Session[] = [];
afterAll(async () => {
  for (const s of sessions) await s.dispose();
  await webgpu.dispose();
  await unfusedGpu.dispose();
});

async function session(executor: Parameters<typeof compile>[1]["executors"][number]): Promise<Session> {
  const s = await compile(graph, { executors: [executor], weights });
  sessions.push(s);
  return s;
}

/** The output, and the tensors of the tapped nodes. */
async function run(s: Session, taps: readonly string[] = []): Promise<{ output: Tensor; seen: Map<string, Tensor> }> {
  const seen = new Map<string, Tensor>();
  const sub = taps.length ? s.tap([...taps]).subscribe((e) => seen.set(e.node, e.tensor)) : undefined;
  const outputs = await s.run({ x });
  sub?.unsubscribe();
  return { output: outputs[graph.outputs[0]!]!, seen };
}

const expectClose = (got: Tensor, want: Tensor, tol: { abs: number; rel: number }, what: string) => {
  const r = compare(got, want, tol);
  expect({ what, ok: r.ok, worst: r.worst }).toMatchObject({ ok: true });
};

describe("linear-gelu and add-layer-norm in a webgpu session", () => {
  it("untapped: both fused kernels run on webgpu, with the numbers of the unfused pairs and of the CPU executor", async () => {
    const fused = await session(webgpu);
    const kinds = fused.plan.steps.map((s) => s.kind);
    expect(kinds).toContain("linear-gelu");
    expect(kinds).toContain("add-layer-norm");
    expect(fused.plan.steps.every((s) => s.placement.executor === "webgpu")).toBe(true);
    const plain = await session(unfusedGpu);
    expect(plain.plan.steps.some((s) => s.kind === "linear-gelu" || s.kind === "add-layer-norm")).toBe(false);

    const got = (await run(fused)).output;
    expectClose(got, (await run(plain)).output, { abs: 1e-6, rel: 1e-6 }, "fused vs unfused on webgpu");
    expectClose(got, (await run(await session(createCpuExecutor()))).output, { abs: 1e-5, rel: 1e-5 }, "webgpu vs cpu");
  });

  it("taps on residual and ln2 see the halves of the fused output; a tap on the pre-activation keeps projection → gelu", async () => {
    const fused = await session(webgpu);
    const plain = await session(unfusedGpu);
    const taps = ["residual", "ln2", "mlp.hidden"];
    const tapped = fused.explain({ watched: taps });
    expect(tapped).toContain("residual + ln2 → add-layer-norm");
    expect(tapped).toContain("kept unfused: mlp.gelu (mlp.hidden is tapped)");
    const a = await run(fused, taps);
    const b = await run(plain, taps);
    for (const node of taps) {
      expect(a.seen.get(node)!.shape).toEqual([B, T, node === "mlp.hidden" ? 4 * E : E]);
      expectClose(a.seen.get(node)!, b.seen.get(node)!, { abs: 1e-6, rel: 1e-6 }, node);
    }
    expectClose(a.output, b.output, { abs: 1e-6, rel: 1e-6 }, "output");
  });
});
