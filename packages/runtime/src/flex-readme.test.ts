// The attention README's variant-as-data example (ALiBi as a score modification, causal as a mask modification) on
// cpu, against the same attention written out in float64.
import { flexAttention } from "@attngraph/attention";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { Tensor } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { compile } from "./compile.js";
import { randomTensor } from "./test-random.js";

const [B, H, T, D] = [2, 4, 5, 8];

describe("README: variants as data", () => {
  it("ALiBi + causal through score-mod and mask-mod equals the float64 attention", async () => {
    const [q, k, v] = [randomTensor([B, H, T, D], 1), randomTensor([B, H, T, D], 2), randomTensor([B, H, T, D], 3)];
    const slopes = Tensor.from([0.5, 0.25, 0.125, 0.0625], [4]);
    // README: from here
    const graph = flexAttention({
      numHeads: 4,
      headDim: 8,
      scoreMod: {
        op: "add",
        args: [
          "score",
          {
            op: "mul",
            args: [
              { op: "input", name: "slopes", index: ["h"] },
              { op: "sub", args: ["kv", "q"] },
            ],
          },
        ],
      },
      maskMod: { op: "ge", args: ["q", "kv"] },
      gathered: { slopes: [4] },
    });
    const { output } = await (await compile(graph, { executors: [createCpuExecutor()] })).run({ q, k, v, slopes });
    // README: to here
    const [qd, kd, vd, out] = [q.toArray(), k.toArray(), v.toArray(), output!.toArray()];
    const at = (b: number, h: number, t: number, d: number) => ((b * H + h) * T + t) * D + d;
    for (let b = 0; b < B; b++)
      for (let h = 0; h < H; h++)
        for (let i = 0; i < T; i++) {
          const s = Array.from({ length: i + 1 }, (_, j) => {
            let dot = 0;
            for (let d = 0; d < D; d++) dot += qd[at(b, h, i, d)]! * kd[at(b, h, j, d)]!;
            return dot / Math.sqrt(D) + slopes.toArray()[h]! * (j - i);
          });
          const m = Math.max(...s);
          const e = s.map((x) => Math.exp(x - m));
          const z = e.reduce((a, x) => a + x, 0);
          for (let d = 0; d < D; d++) {
            const want = e.reduce((a, w, j) => a + (w / z) * vd[at(b, h, j, d)]!, 0);
            expect(Math.abs(out[at(b, h, i, d)]! - want), `b${b} h${h} q${i} d${d}`).toBeLessThan(1e-6);
          }
        }
  });
});
