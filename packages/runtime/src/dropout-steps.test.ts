// Training-mode dropout draws a new mask per run (issue 26, item 4): the run's dropout step is folded into every
// dropout seed, a given step draws the same mask on any session, and "fixed" masks (or an explicit step) repeat on
// request. Every executor, fused attention and gradients: @attngraph/reliability (dropout-steps.test.ts).
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { createOpRegistry, dropoutKeep, dropoutSeedAt, GraphBuilder, GraphValidationError } from "@attngraph/graph";
import type { Plan } from "@attngraph/scheduler";
import { Tensor } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { compile, type CompileOptions } from "./compile.js";
import { withDropoutStep } from "./dropout-steps.js";

const RATE = 0.5;
const SEED = 1234;
/** y = dropout(x) in training. */
function dropoutGraph() {
  const b = new GraphBuilder();
  const x = b.input("x", [4, 64]);
  const y = b.add("dropout", "y", { x }, { rate: RATE, seed: SEED, training: true });
  return b.output(y).build();
}
const ones = Tensor.from(new Array(256).fill(1), [4, 64]);
const session = (options: Partial<CompileOptions> = {}) =>
  compile(dropoutGraph(), { executors: [createCpuExecutor()], ...options });
/** Which elements a run kept (x = 1 everywhere: kept ones are 1 / (1 − rate), dropped ones 0). */
const kept = (y: Tensor) => Array.from(y.toFloat32Array(), (v) => v !== 0);
/** What the generator keeps at `step`, computed independently of the runtime. */
const expectedKept = (step: number) =>
  Array.from({ length: 256 }, (_, i) => dropoutKeep(dropoutSeedAt(SEED, step), i, RATE));

describe("dropout steps", () => {
  it("run k of a session draws the mask of step k: new on every run, the seed's own on the first", async () => {
    const s = await session();
    const masks: boolean[][] = [];
    for (let k = 0; k < 4; k++) masks.push(kept((await s.run({ x: ones })).y!));
    masks.forEach((m, k) => expect(m, `run ${k}`).toEqual(expectedKept(k)));
    expect(masks[0]).toEqual(Array.from({ length: 256 }, (_, i) => dropoutKeep(SEED, i, RATE))); // step 0: the seed itself
    for (let k = 1; k < 4; k++) expect(masks[k], `run ${k} differs from run ${k - 1}`).not.toEqual(masks[k - 1]);
  });

  it("an explicit dropoutStep draws that step's mask on any session, and dropoutMasks 'fixed' repeats the seed's", async () => {
    const a = await session();
    const b = await session();
    await b.run({ x: ones }); // b is one run ahead
    expect(kept((await a.run({ x: ones }, { dropoutStep: 7 })).y!)).toEqual(expectedKept(7));
    expect(kept((await b.run({ x: ones }, { dropoutStep: 7 })).y!)).toEqual(expectedKept(7));
    const fixed = await session({ dropoutMasks: "fixed" });
    for (let k = 0; k < 3; k++) expect(kept((await fixed.run({ x: ones })).y!), `run ${k}`).toEqual(expectedKept(0));
    await expect(a.run({ x: ones }, { dropoutStep: -1 })).rejects.toThrow(
      /run options\.dropoutStep: invalid dropout step, expected an integer >= 0, got -1/,
    );
    await expect(a.run({ x: ones }, { dropoutStep: 1.5 })).rejects.toThrow(GraphValidationError);
    await expect(session({ dropoutMasks: "sometimes" as never })).rejects.toThrow(
      /compile\.dropoutMasks: unknown dropout masks mode/,
    );
  });

  it("only steps that draw a mask get a folded seed: an eval step keeps its attribute object run after run", () => {
    const registry = createOpRegistry();
    const step = (node: string, training: boolean | undefined) => ({
      node,
      kind: "dropout",
      attrs: { rate: RATE, seed: SEED, ...(training === undefined ? {} : { training }) },
    });
    const planOf = (...steps: ReturnType<typeof step>[]) => ({ steps }) as unknown as Plan;
    const bound = new Map<string, Readonly<Record<string, unknown>>>();
    // Eval (training false, or left to its default false): nothing changes, so the same map comes back.
    expect(withDropoutStep(planOf(step("a", false), step("b", undefined)), registry, bound, 3)).toBe(bound);
    // Training: that step's seed is folded with the run's step; the eval one is left as it is.
    const train = step("t", true);
    const out = withDropoutStep(planOf(train, step("e", false)), registry, bound, 3);
    expect(out.get("t")).toEqual({ ...train.attrs, seed: dropoutSeedAt(SEED, 3) });
    expect(out.has("e")).toBe(false);
    // A run's bound attributes decide, not the plan's: training switched on for this run draws.
    const on = new Map([["a", { rate: RATE, seed: SEED, training: true }]]);
    expect(withDropoutStep(planOf(step("a", false)), registry, on, 2).get("a")).toMatchObject({
      seed: dropoutSeedAt(SEED, 2),
    });
  });
});
