// The page the headless-Chromium test loads (bundled by browser.test.ts): the testkit's executor contract suite on
// `navigator.gpu`, then one golden case through compile (tapped and untapped), results posted to `window.__results`.
import { describeExecutorContract } from "@attngraph/testkit/contract";
import { attentionWeights, buildAttention } from "@attngraph/attention";
import { compile } from "@attngraph/runtime";
import { Tensor, compare } from "@attngraph/tensor";
import golden from "../../testkit/golden/mha-causal-outproj-b2-t6-d8-h2.json" with { type: "json" };
import { createWebGpuExecutor } from "./index.js";
import { runAll, type ShimResult } from "./test-vitest-shim.js";

/** The one contract test that reads the golden files with node:fs; the golden check below replaces it here. */
const NEEDS_NODE = "matches the expected tensors of every golden case";

async function goldenCase(): Promise<ShimResult[]> {
  const webgpu = createWebGpuExecutor();
  const graph = buildAttention(golden.config);
  const session = await compile(graph, {
    executors: [webgpu],
    weights: attentionWeights(golden.config, golden.weights),
  });
  const x = Tensor.from(golden.inputs.x.data, golden.inputs.x.shape);
  const expected = golden.expected as Record<string, { shape: number[]; data: number[] }>;
  const got = new Map<string, Tensor>();
  const sub = session
    .tap(Object.keys(expected).filter((n) => n !== "output"))
    .subscribe((e) => got.set(e.node, e.tensor));
  const tapped = await session.run({ x });
  sub.unsubscribe();
  got.set("output", tapped[graph.outputs[0]!]!);
  const fused = (await session.run({ x }))[graph.outputs[0]!]!;
  const results: ShimResult[] = [];
  const check = (name: string, t: Tensor | undefined, want: { shape: number[]; data: number[] }) => {
    const r = t ? compare(t, Tensor.from(want.data, want.shape), golden.tolerance) : undefined;
    results.push({
      name,
      ok: r?.ok === true,
      ...(r?.ok ? {} : { error: r ? JSON.stringify(r.worst) : "no tensor delivered" }),
    });
  };
  for (const [name, want] of Object.entries(expected))
    check(`golden ${golden.name} (tapped): ${name}`, got.get(name), want);
  check(`golden ${golden.name} (untapped, fused): output`, fused, expected["output"]!);
  results.push({
    name: "golden: the untapped plan uses the fused attention kernel",
    ok: session.plan.steps.some((s) => s.kind === "attention"),
  });
  await session.dispose();
  await webgpu.dispose();
  return results;
}

async function main(): Promise<void> {
  const w = globalThis as unknown as { __results?: ShimResult[]; __error?: string };
  try {
    describeExecutorContract("webgpu (browser)", () => createWebGpuExecutor());
    const contract = await runAll((name) =>
      name.endsWith(NEEDS_NODE) ? "reads the golden files with node:fs; one golden case runs below instead" : undefined,
    );
    w.__results = [...contract, ...(await goldenCase())];
  } catch (e) {
    w.__error = e instanceof Error ? `${e.message}\n${e.stack}` : String(e);
  }
}

void main();
