// The page the headless-Chromium test loads (bundled by browser.test.ts): the testkit's executor contract suite on
// `navigator.gpu`, then one golden case through compile (tapped and untapped), results posted to `window.__results`.
import { describeExecutorContract } from "@attngraph/testkit/contract";
import { compile } from "@attngraph/runtime";
import { checkGoldenSession } from "@attngraph/testkit";
import golden from "../../testkit/golden/mha-causal-outproj-b2-t6-d8-h2.json" with { type: "json" };
import { createWebGpuExecutor } from "./index.js";
import { runAll, type ShimResult } from "./test-vitest-shim.js";

/** The one contract test that reads the golden files with node:fs; the golden check below replaces it here. */
const NEEDS_NODE = "matches the expected tensors of every golden case";

/** The golden case through compile on a fresh executor (testkit's checkGoldenSession: tapped, then untapped and fused). */
async function goldenCase(): Promise<ShimResult[]> {
  const webgpu = createWebGpuExecutor();
  const results = await checkGoldenSession(golden, (graph, weights) =>
    compile(graph, { executors: [webgpu], weights }),
  );
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
