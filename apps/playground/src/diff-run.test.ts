// The page's diff on real executors in Node: cpu against wasm agree on every node of the default config's graph, each
// side on a fresh executor that is disposed afterwards; a planted kernel error is named as the first disagreement with
// a repro; an executor that cannot run here fails in words before anything runs.
import { buildAttention, normalizeConfig } from "@attngraph/attention";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { createWasmExecutor } from "@attngraph/executor-wasm";
import type { Executor } from "@attngraph/graph";
import { withPlantedError } from "@attngraph/testkit";
import { describe, expect, it } from "vitest";
import { diffRows, firstLine } from "./diff-model.js";
import { runDiff, type DiffSubject } from "./diff-run.js";
import type { ExecutorEntry } from "./executor-entry.js";
import { runInputs } from "./inputs.js";
import { builderOptions, defaultConfig } from "./playground-config.js";

const config = normalizeConfig(defaultConfig.attention);
const data = runInputs(config, defaultConfig, undefined);
const subject: DiffSubject = {
  graph: buildAttention(config, builderOptions(defaultConfig, false)),
  inputs: data.inputs,
  weights: data.weights,
};

/** An entry whose `fresh()` makes a new executor each time and records it; `create()` (the page's shared one) must not be used. */
function entry(
  name: string,
  make: () => Executor,
  available: true | string = true,
): ExecutorEntry & { made: Executor[]; disposed: number } {
  const e = {
    name,
    made: [] as Executor[],
    disposed: 0,
    available: async () => available,
    create: async (): Promise<Executor> => {
      throw new Error(`${name}: the diff must not use the page's shared executor`);
    },
    fresh: async () => {
      const x = make();
      const dispose = x.dispose?.bind(x);
      e.made.push(Object.assign(x, { dispose: async () => (e.disposed++, dispose?.()) }));
      return x;
    },
  };
  return e;
}

describe("runDiff", () => {
  it("finds cpu and wasm agreeing on every node, each on a fresh executor disposed afterwards", async () => {
    const cpu = entry("cpu", () => createCpuExecutor());
    const wasm = entry("wasm", () => createWasmExecutor());
    const r = await runDiff(cpu, wasm, subject);
    const rows = diffRows(r);
    expect(rows.map((x) => x.node)).toEqual(subject.graph.nodes.map((n) => n.name));
    expect(rows.filter((x) => x.status !== "agree")).toEqual([]);
    expect(new Set(rows.map((x) => x.ranOn))).toEqual(new Set(["wasm"]));
    expect(r.ok).toBe(true);
    expect(firstLine(r)).toBe("no node disagrees: there is nothing to reproduce");
    expect([cpu.made.length, wasm.made.length, cpu.disposed, wasm.disposed]).toEqual([1, 1, 1, 1]);
  });

  it("names a planted softmax error as the first disagreement, with a repro of that node alone", async () => {
    const cpu = entry("cpu", () => createCpuExecutor());
    const mutant = entry("mutant", () => withPlantedError(createCpuExecutor(), "softmax", 0.25));
    const r = await runDiff(cpu, mutant, subject);
    const softmax = subject.graph.nodes.find((n) => n.kind === "softmax")!.name;
    expect(r.first).toMatchObject({ node: softmax, executor: "mutant", alone: "disagrees" });
    expect(r.first!.repro).toMatchObject({
      format: "attngraph.repro",
      node: softmax,
      reference: "cpu",
      executor: "mutant",
    });
    expect(diffRows(r).find((x) => x.node === softmax)).toMatchObject({ status: "disagree", maxAbs: "0.25" });
    expect(firstLine(r)).toContain(
      `first disagreement: node ${softmax} (softmax) on mutant; run alone on cpu's values of its inputs, it still disagrees`,
    );
  });

  it("fails in words, before making any executor, when one cannot run here", async () => {
    const cpu = entry("cpu", () => createCpuExecutor());
    const webgpu = entry("webgpu", () => createCpuExecutor(), "navigator.gpu has no adapter");
    await expect(runDiff(cpu, webgpu, subject)).rejects.toThrow(
      "webgpu: not available here (navigator.gpu has no adapter)",
    );
    expect(cpu.made.length + webgpu.made.length).toBe(0);
  });

  it("refuses one executor on both sides", async () => {
    const cpu = entry("cpu", () => createCpuExecutor());
    await expect(runDiff(cpu, cpu, subject)).rejects.toMatchObject({ name: "DiffSetupError" });
  });
});
