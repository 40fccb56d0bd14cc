// One golden case through a compiled session, checked without vitest or node:fs: what the executors' browser test pages
// run after their kernels (the runtime is theirs to hand in: testkit does not depend on it). The session runs twice:
// tapped (every expected intermediate delivered) and untapped (free to fuse), and the untapped plan must use the fused
// attention kernel.
import { attentionWeights, buildAttention, type AttentionConfigInput, type RawWeight } from "@attngraph/attention";
import type { OpGraph } from "@attngraph/graph";
import { Tensor, compare, type Tolerance } from "@attngraph/tensor";

/** A golden case as its JSON file reads (the page imports the file; the case format is golden/FORMAT.md). */
export interface PageGoldenCase {
  readonly name: string;
  readonly config: AttentionConfigInput;
  readonly weights: Readonly<Record<string, RawWeight>>;
  readonly inputs: { readonly x: { readonly data: readonly number[]; readonly shape: readonly number[] } };
  /** Node name → { shape, data }; "output" is the graph's output. */
  readonly expected: object;
  readonly tolerance: Tolerance;
}

/** What the check needs of the runtime's Session. */
export interface PageSession {
  tap(nodes: readonly string[]): {
    subscribe(fn: (e: { readonly node: string; readonly tensor: Tensor }) => void): { unsubscribe(): void };
  };
  run(inputs: Readonly<Record<string, Tensor>>): Promise<Record<string, Tensor>>;
  readonly plan: { readonly steps: readonly { readonly kind: string }[] };
  dispose(): Promise<void>;
}

/** One named check of a page: ok, or why not. */
export interface PageResult {
  readonly name: string;
  readonly ok: boolean;
  readonly error?: string;
}

/**
 * Builds the case's graph, compiles it with `open` (e.g. `(g, weights) => compile(g, { executors: [ex], weights })`),
 * and checks every expected tensor within the case's tolerance; disposes the session.
 */
export async function checkGoldenSession(
  golden: PageGoldenCase,
  open: (graph: OpGraph, weights: Record<string, Tensor>) => Promise<PageSession>,
): Promise<PageResult[]> {
  const graph = buildAttention(golden.config);
  const session = await open(graph, attentionWeights(golden.config, golden.weights));
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
  const results: PageResult[] = [];
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
  return results;
}
