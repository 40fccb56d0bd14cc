// The golden cases as graph cases (tests only): attention cases through testkit's mapping (the conformance runner's),
// golden-train cases' forward step through the @attngraph/nn builders as the worked example names them.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { buildAttention } from "@attngraph/attention";
import { PYTORCH_ATTENTION_WEIGHTS, loadStateDict, simpleTransformer, transformerBlock } from "@attngraph/nn";
import { compare, Tensor, type AnyTensor } from "@attngraph/tensor";
import { expect } from "vitest";
import {
  TRAIN_FORWARD_NODES,
  attentionGraphCase,
  flexGraphCase,
  goldenDir,
  goldenFlexDir,
  goldenGradDir,
  goldenTrainDir,
  listCases,
  loadAnyCase,
  parseFlexCase,
  type GraphCase,
  type TrainCase,
} from "@attngraph/testkit";

/** The case folders: testkit's, and the shared ones beside the repository where present. */
export function caseFolders(): string[] {
  const shared = join(goldenDir, "..", "..", "..", "..", "shared");
  const extra = ["golden", "golden-grad", "golden-train"].map((d) => join(shared, d)).filter((d) => existsSync(d));
  return [goldenDir, goldenGradDir, goldenTrainDir, ...extra];
}

/** The golden-flex folders (variants as score and mask modifications): testkit's, and the shared one where present. */
export function flexCaseFolders(): string[] {
  const shared = join(goldenDir, "..", "..", "..", "..", "shared", "golden-flex");
  return [goldenFlexDir, ...(existsSync(shared) ? [shared] : [])];
}

/** Every golden-flex case file with its graph case (flexAttention: score → score-mod → mask-mod → softmax → weighted-sum). */
export function flexGraphCases(): { id: string; gc: GraphCase }[] {
  return flexCaseFolders().flatMap((dir) =>
    listCases(dir).map((file) => ({
      id: `${dir.split("/").slice(-2).join("/")}/${file.split("/").pop()}`,
      gc: flexGraphCase(parseFlexCase(JSON.parse(readFileSync(file, "utf8")), file)),
    })),
  );
}

/** Every case file with its graph case (both fused and separate QKV for attention cases). */
export function graphCases(): { id: string; gc: GraphCase }[] {
  return caseFolders().flatMap((dir) =>
    listCases(dir).flatMap((file) => {
      const loaded = loadAnyCase(file);
      const id = `${dir.split("/").slice(-2).join("/")}/${file.split("/").pop()}`;
      if (loaded.format === "train") return [{ id, gc: trainForward(loaded.case) }];
      return [false, true].map((fused) => ({
        id: `${id}${fused ? " (fused QKV)" : ""}`,
        gc: attentionGraphCase(loaded.case, fused),
      }));
    }),
  );
}

/** A golden-train case's forward step: the graph of its kind, its parameters by state_dict name, its inputs. */
function trainForward(c: TrainCase): GraphCase {
  const cfg = c.config as Record<string, number | string>;
  const block = {
    embedDim: cfg["embedDim"] as number,
    nHeads: cfg["nHeads"] as number,
    ...pickDefined(cfg, ["mlpRatio", "layerNormEps", "gelu"]),
  };
  const mask = c.inputs["mask"];
  const withMask = mask ? { mask } : {};
  let graph;
  let inputs: Record<string, AnyTensor>;
  if (c.kind === "block") {
    graph = transformerBlock(block, { mask: mask !== undefined });
    inputs = { x: c.inputs["x"]!, ...withMask };
  } else if (c.kind === "mha-backward") {
    const e = block.embedDim;
    graph = buildAttention(
      { dIn: e, dOut: e, numHeads: block.nHeads, qkvBias: false, outProj: true, outBias: false },
      { fusedQkv: true, weightNames: PYTORCH_ATTENTION_WEIGHTS, ...(mask ? { userMask: "mask" as const } : {}) },
    );
    inputs = { x: c.inputs["x"]!, ...withMask };
  } else {
    graph = simpleTransformer({
      ...block,
      vocabSize: cfg["vocabSize"] as number,
      seqLen: cfg["seqLen"] as number,
      blocks: cfg["blocks"] as number,
      dropout: cfg["dropout"] as number,
    });
    const n = c.training!.batchSize;
    const tokens = c.inputs["tokens"]!;
    inputs = { tokens: Tensor.int32(tokens.toInt32Array().subarray(0, n * tokens.shape[1]!), [n, tokens.shape[1]!]) };
  }
  const forward = TRAIN_FORWARD_NODES[c.kind];
  const expected = Object.entries(c.expected).flatMap(([name, tensor]) =>
    Object.hasOwn(forward, name) ? [{ name, node: forward[name]!, tensor }] : [],
  );
  const g = graph;
  return {
    file: c.file,
    name: c.name,
    graph: g,
    weights: () => loadStateDict(g, c.params),
    inputs,
    expected,
    tolerance: c.tolerance,
  };
}

function pickDefined(cfg: Record<string, unknown>, keys: readonly string[]): Record<string, never> {
  return Object.fromEntries(keys.filter((k) => cfg[k] !== undefined).map((k) => [k, cfg[k]])) as Record<string, never>;
}

/** Every expected tensor of `gc` within its tolerance in `got` (outputs by node name), each failure named. */
export function expectGoldenOutputs(got: Readonly<Record<string, AnyTensor | undefined>>, gc: GraphCase): void {
  for (const e of gc.expected) {
    const r = compare(got[e.node] as Tensor, e.tensor, gc.tolerance);
    const worst = `worst ${JSON.stringify(r.worst)}${r.shapeMismatch ?? ""}`;
    expect(r.ok, `${e.name}: ${r.failures} of ${e.tensor.size} outside tolerance, ${worst}`).toBe(true);
  }
}
