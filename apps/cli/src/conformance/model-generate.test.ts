// Greedy tokens against PyTorch's: equal passes, a different token fails naming it, and a different token where the
// top two logits were within 1e-5 is a tie (FORMAT.md): a pass that says so, the tokens after it not compared.
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { loadModel, type GptModel } from "@attngraph/models";
import { readSafetensors } from "@attngraph/nn";
import { Tensor } from "@attngraph/tensor";
import { goldenModelsDir } from "@attngraph/testkit";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { greedyCheck } from "./model-generate.js";

/** nanogpt-bias-l2 with a zero embedding table: the tied head makes every logit 0, so every greedy step is a tie. */
function tiedEverywhere(): GptModel {
  const sd = new Map(
    readSafetensors(new Uint8Array(readFileSync(join(goldenModelsDir, "nanogpt-bias-l2.safetensors")))).tensors,
  );
  sd.set("transformer.wte.weight", Tensor.zeros([50, 32]));
  sd.set("lm_head.weight", Tensor.zeros([50, 32]));
  return loadModel(sd, { config: { n_head: 4 }, executors: [createCpuExecutor()] }) as GptModel;
}

describe("greedyCheck", () => {
  const prompt = Tensor.int32([5, 6], [1, 2]);

  it("equal tokens pass; a differing token where the top two logits are apart fails, naming it", async () => {
    const model = loadModel(readFileSync(join(goldenModelsDir, "nanogpt-bias-l2.safetensors")), {
      config: { n_head: 4 },
      executors: [createCpuExecutor()],
    }) as GptModel;
    const c = JSON.parse(readFileSync(join(goldenModelsDir, "nanogpt-bias-l2.json"), "utf8"));
    const p = Tensor.int32(c.generate.prompt.data, c.generate.prompt.shape);
    const notes: string[] = [];
    expect(
      (
        await greedyCheck(
          model,
          { prompt: p, maxNewTokens: 8, greedy: Tensor.int32(c.generate.greedy.data, [1, 12]) },
          notes,
        )
      ).ok,
    ).toBe(true);
    const wrong = [...c.generate.greedy.data];
    wrong[6] = 1;
    const r = await greedyCheck(model, { prompt: p, maxNewTokens: 8, greedy: Tensor.int32(wrong, [1, 12]) }, notes);
    expect(r).toMatchObject({ ok: false, failures: 1, worst: { index: 6, expected: 1 } });
    expect(notes).toEqual([]);
    await model.dispose();
  });

  it("a differing token at a tie passes and says so", async () => {
    const model = tiedEverywhere();
    const notes: string[] = [];
    // Every logit is 0: greedy takes token 0 each step; PyTorch's file says 3 at the first new position.
    const r = await greedyCheck(
      model,
      { prompt, maxNewTokens: 3, greedy: Tensor.int32([5, 6, 3, 9, 9], [1, 5]) },
      notes,
    );
    expect(r.ok).toBe(true);
    expect(notes).toEqual([
      "greedy token 2 is a tie (top two logits 0.0e+0 apart): got 0, PyTorch 3; later tokens not compared",
    ]);
    await model.dispose();
  });
});
