// compile's validateWith: every step runs on a second executor on the same inputs; the first node whose results differ
// fails the run ("error") or is reported ("warn"). A planted wrong kernel is caught at its own node, not downstream.
import { attentionWeights, buildAttention } from "@attngraph/attention";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { GraphValidationError, type Executor } from "@attngraph/graph";
import { withPlantedError } from "@attngraph/testkit";
import { describe, expect, it } from "vitest";
import { compile } from "./compile.js";
import type { SessionEvent } from "./events.js";
import { randomTensor, rawAttentionWeights } from "./test-random.js";
import { ValidationError } from "./validate.js";

const config = { dIn: 8, dOut: 8, numHeads: 2, causal: true, outProj: true, outBias: true };
const weights = attentionWeights(config, rawAttentionWeights(config));
const x = randomTensor([2, 4, 8], 9);

/** A cpu executor named "mutant" whose `kind` kernel is off by 1e-2 in its first element: a kernel bug to find. */
const mutant = (kind: string): Executor => withPlantedError(createCpuExecutor(), kind, 1e-2);

describe("validateWith", () => {
  it("two executors that agree: the run goes on and nothing is reported", async () => {
    const s = await compile(buildAttention(config), {
      executors: [createCpuExecutor()],
      weights,
      validateWith: createCpuExecutor(),
      validate: { mode: "warn" },
    });
    const events: SessionEvent[] = [];
    s.events$.subscribe((e) => events.push(e));
    expect((await s.run({ x })).output!.shape).toEqual([2, 4, 8]);
    // Tapped: the chain runs unfused and softmax in place over its input's buffer; the validator got that input first.
    const sub = s.tap("weights").subscribe();
    await s.run({ x });
    sub.unsubscribe();
    expect(s.explain({ watched: ["weights"] })).toMatch(/weights\s+softmax/);
    expect(events.filter((e) => e.type === "validation-mismatch")).toEqual([]);
  });

  it('"error": the first node whose kernel is wrong fails the run, named, with both executors and the worst element', async () => {
    const s = await compile(buildAttention(config), {
      executors: [mutant("out-proj")],
      weights,
      validateWith: createCpuExecutor(),
    });
    const e = await s.run({ x }).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(ValidationError);
    const d = (e as ValidationError).disagreement;
    expect(d).toMatchObject({
      node: "output",
      kind: "out-proj",
      executor: "mutant",
      validator: "cpu",
      index: 0,
      failures: 1,
    });
    expect((e as Error).message).toMatch(
      /^run 1: node output \(op out-proj\) on mutant disagrees with cpu: 1 element\(s\) out of tolerance, worst at 0: /,
    );
  });

  it('"warn": every disagreeing node is reported on events$ and the run resolves; nodes downstream are judged on their own inputs', async () => {
    const s = await compile(buildAttention(config), {
      executors: [mutant("projection")],
      weights,
      validateWith: createCpuExecutor(),
      validate: { mode: "warn" },
    });
    const mismatches: string[] = [];
    s.events$.subscribe((e) => e.type === "validation-mismatch" && mismatches.push(e.node));
    expect((await s.run({ x })).output!.shape).toEqual([2, 4, 8]);
    // The three projections are wrong; the attention and out-proj after them get the same (wrong) inputs on both sides.
    expect(mismatches).toEqual(["queries", "keys", "values"]);
  });

  it("bad options are typed errors naming the field", async () => {
    const graph = buildAttention(config);
    const executors = [createCpuExecutor()];
    await expect(compile(graph, { executors, weights, validateWith: {} as never })).rejects.toThrow(
      GraphValidationError,
    );
    await expect(
      compile(graph, { executors, weights, validateWith: createCpuExecutor(), validate: { mode: "loud" as never } }),
    ).rejects.toThrow(/compile\.validate\.mode/);
    await expect(
      compile(graph, {
        executors,
        weights,
        validateWith: createCpuExecutor(),
        validate: { tolerance: { abs: -1, rel: 0 } },
      }),
    ).rejects.toThrow(/compile\.validate\.tolerance\.abs/);
    await expect(compile(graph, { executors, weights, validate: { mode: "warn" } })).rejects.toThrow(
      /validate options without validateWith/,
    );
  });
});
