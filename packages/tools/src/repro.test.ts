// Reading a repro file: every malformed field is a ReproFormatError naming it; an executor the file names but the
// caller did not give is an error saying which.
import { buildAttention } from "@attngraph/attention";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { createWasmExecutor } from "@attngraph/executor-wasm";
import { describe, expect, it } from "vitest";
import type { Repro } from "./diff-types.js";
import { buildRepro, readRepro, replayRepro } from "./repro.js";
import { ReproFormatError } from "./tensor-json.js";
import { config } from "./test-fixture.js";
import { Tensor } from "@attngraph/tensor";

const graph = buildAttention(config);
const scores = Tensor.from(
  Array.from({ length: 2 * 3 * 5 * 5 }, (_, i) => Math.sin(i)),
  [2, 3, 5, 5],
);

async function repro(): Promise<Repro> {
  return JSON.parse(
    JSON.stringify(
      (
        await buildRepro(graph, "masked", new Map([["scores", scores]]), createCpuExecutor(), createWasmExecutor(), {
          abs: 1e-4,
          rel: 1e-4,
        })
      ).repro,
    ),
  );
}

describe("repro files", () => {
  it("a built repro reads back and replays in agreement (cpu vs wasm, the causal mask alone; −∞ survives JSON)", async () => {
    const r = await repro();
    expect((r.outputs["cpu"] as unknown as { data: unknown[] }).data).toContain("-Infinity");
    const read = readRepro(JSON.stringify(r));
    expect(read.graph.nodes.map((n) => n.kind)).toEqual(["mask"]);
    const replay = await replayRepro(r, { executors: [createWasmExecutor(), createCpuExecutor()] });
    expect(replay).toMatchObject({ node: "masked", reproduced: false, sameAsRecorded: { cpu: true, wasm: true } });
    expect(replay.comparison.status).toBe("agree");
  });

  it.each<[string, (r: Record<string, any>) => unknown, RegExp]>([
    ["$", () => "{", /not valid JSON/],
    ["$.format", (r) => ({ ...r, format: "attngraph.graph" }), /not an attngraph repro/],
    ["$.version", (r) => ({ ...r, version: 2 }), /unknown version/],
    ["$.node", (r) => ({ ...r, node: 3 }), /not a string/],
    ["$.tolerance.rel", (r) => ({ ...r, tolerance: { abs: 0 } }), /invalid tolerance/],
    // A well-formed graph that is wrong as a graph (an unknown op kind) names its node.
    [
      "$.graph (masked)",
      (r) => ({ ...r, graph: { ...r.graph, nodes: [{ ...r.graph.nodes[0], kind: "nope" }] } }),
      /not a valid graph.*nope/,
    ],
    [
      "$.graph.nodes[0].attrs",
      (r) => ({ ...r, graph: { ...r.graph, nodes: [{ ...r.graph.nodes[0], attrs: 5 }] } }),
      /not a valid graph/,
    ],
    ["$.graph.nodes", (r) => ({ ...r, node: "other" }), /not the repro's node/],
    ["$.inputs.scores", (r) => ({ ...r, inputs: {} }), /missing input/],
    ["$.inputs.scores.data", (r) => ({ ...r, inputs: { scores: { shape: [1], data: [] } } }), /wrong length/],
    ["$.outputs.wasm", (r) => ({ ...r, outputs: { cpu: r.outputs.cpu } }), /missing output/],
  ])("%s: a malformed field is a ReproFormatError naming it", async (path, edit, message) => {
    const bad = edit(await repro());
    const e = (() => {
      try {
        readRepro(bad);
      } catch (err) {
        return err;
      }
    })();
    expect(e).toBeInstanceOf(ReproFormatError);
    expect((e as ReproFormatError).subject).toBe(path);
    expect((e as ReproFormatError).message).toMatch(message);
  });

  it("replaying without an executor the file names says which is missing", async () => {
    await expect(replayRepro(await repro(), { executors: [createCpuExecutor()] })).rejects.toThrow(
      /ran on wasm; no executor of that name was given \(given: cpu\)/,
    );
  });
});
