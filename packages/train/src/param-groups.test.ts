// Parameter groups: nanoGPT's rank rule, listed groups with their own options, and the errors that keep a parameter
// from being trained with the wrong hyperparameters (in no group, in two, an unknown name, an option the optimizer
// does not have). The numbers of groups against PyTorch are in groups-clip.test.ts.
import { simpleTransformer } from "@attngraph/nn";
import { describe, expect, it } from "vitest";
import { adam, sgd } from "./optimizer.js";
import { groupOptimizers, nanoGPTGroups } from "./param-groups.js";
import { trainingGraph } from "./training-graph.js";

const graph = simpleTransformer({ vocabSize: 5, embedDim: 4, nHeads: 1, seqLen: 3 }, { loss: true });
const params = graph.weights.map((w) => w.name);

describe("parameter groups", () => {
  it("nanoGPTGroups decays rank >= 2 (pos_embed [1, T, E] too) and nothing else; the adam-step nodes carry it", () => {
    const t = trainingGraph(graph, {
      loss: "loss",
      optimizer: adam({ lr: 1e-3, decoupled: true }),
      paramGroups: nanoGPTGroups(0.1),
    });
    const decay = Object.fromEntries(
      params.map((p) => [p, t.graph.nodes.find((n) => n.name === `${p}.next`)!.attrs["weightDecay"]]),
    );
    expect(decay).toEqual({
      "embed.weight": 0.1,
      pos_embed: 0.1,
      "transformer.ln1.weight": 0,
      "transformer.ln1.bias": 0,
      "transformer.attention.qkv_proj.weight": 0.1,
      "transformer.attention.out_proj.weight": 0.1,
      "transformer.ln2.weight": 0,
      "transformer.ln2.bias": 0,
      "transformer.mlp.0.weight": 0.1,
      "transformer.mlp.0.bias": 0,
      "transformer.mlp.2.weight": 0.1,
      "transformer.mlp.2.bias": 0,
      "output.weight": 0.1,
      "output.bias": 0,
    });
  });

  it("listed groups set their own lr, betas and eps; the rest of the options are the optimizer's", () => {
    const ln = params.filter((p) => p.includes(".ln"));
    const groups = [
      { params: ln, lr: 5e-3, betas: [0.8, 0.9] as const, eps: 1e-6 },
      { params: (name: string) => !name.includes(".ln"), weightDecay: 0.2 },
    ];
    const t = trainingGraph(graph, {
      loss: "loss",
      optimizer: adam({ lr: 1e-3, betas: [0.9, 0.95], decoupled: true }),
      paramGroups: groups,
    });
    const step = (p: string) => t.graph.nodes.find((n) => n.name === `${p}.next`)!.attrs;
    expect(step("transformer.ln1.bias")).toEqual({
      lr: 5e-3,
      beta1: 0.8,
      beta2: 0.9,
      eps: 1e-6,
      weightDecay: 0,
      decoupled: true,
    });
    expect(step("output.weight")).toEqual({
      lr: 1e-3,
      beta1: 0.9,
      beta2: 0.95,
      eps: 1e-8,
      weightDecay: 0.2,
      decoupled: true,
    });
    expect(t.graph.nodes.find((n) => n.name === "transformer.ln1.bias.adam.v.next")!.attrs["beta"]).toBe(0.9);
    expect(groupOptimizers(graph, params, adam({ lr: 1e-3 }), groups).get("transformer.ln2.weight")!.lr).toBe(5e-3);
  });

  it("a parameter in no group, in two, an unknown name, no params, or an option the optimizer lacks is an error naming it", () => {
    const opt = adam({ lr: 1e-3 });
    expect(() => groupOptimizers(graph, params, opt, [{ params: ["embed.weight"] }])).toThrow(
      /train\.paramGroups\.pos_embed: a parameter is in no group, expected every trained parameter in exactly one group, got 13 without: pos_embed, /,
    );
    expect(() => groupOptimizers(graph, params, opt, [{ params }, { params: ["output.bias"] }])).toThrow(
      /train\.paramGroups\.output\.bias: a parameter is in two groups, expected exactly one group, got groups 0 and 1/,
    );
    expect(() => groupOptimizers(graph, params, opt, [{ params: [...params, "nope.weight"] }])).toThrow(
      /train\.paramGroups\[0\]\.params: no trained parameter of this name, .*got nope\.weight/,
    );
    expect(() => groupOptimizers(graph, params, opt, [{ params: "embed.weight" as unknown as string[] }])).toThrow(
      /train\.paramGroups\[0\]\.params/,
    );
    expect(() => groupOptimizers(graph, params, opt, [])).toThrow(/train\.paramGroups: no parameter groups/);
    expect(() => groupOptimizers(graph, params, opt, [{ params, momentum: 0.9 }])).toThrow(
      /adam\.momentum: not an option of this optimizer, expected lr, weightDecay, betas, eps, got momentum/,
    );
    expect(() => groupOptimizers(graph, params, opt, [{ params, lr: -1 }])).toThrow(
      /adam\.lr: invalid optimizer option/,
    );
    expect(() => groupOptimizers(graph, params, sgd({ lr: 0.1 }), [{ params, betas: [0.9, 0.99] }])).toThrow(
      /sgd\.betas: not an option of this optimizer/,
    );
  });
});
