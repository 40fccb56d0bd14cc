// The executor contract suite (`@attngraph/testkit/contract`). Every executor package runs it, like tfjs's
// describeWithFlags(ALL_ENVS):
//
//   import { describeExecutorContract } from "@attngraph/testkit/contract";
//   describeExecutorContract("cpu", () => createCpuExecutor());
//
// It talks to the executor only through the contract (supports, registerKernel, upload, dispatch, download), builds
// each KernelCall as the runtime would (normalized attributes, inputs in the op's declared order), and checks the
// numbers against the float64 reference of src/reference. Test data comes from a seeded generator, so a failure
// reproduces. Needs vitest (a peer dependency); the golden-case check also needs Node.
import { afterAll, beforeAll, describe } from "vitest";
import type { Executor } from "@attngraph/graph";
import { attentionChecks } from "./contract/attention-checks.js";
import { attentionGradChecks } from "./contract/attention-grad-checks.js";
import { backwardChecks } from "./contract/backward-checks.js";
import { blockChecks } from "./contract/block-checks.js";
import { fusedBlockChecks } from "./contract/fused-block-checks.js";
import { contractChecks } from "./contract/contract-checks.js";
import type { ContractContext } from "./contract/context.js";
import { dropoutChecks } from "./contract/dropout-checks.js";
import { Harness } from "./contract/harness.js";
import { linearChecks } from "./contract/linear-checks.js";
import { llamaChecks } from "./contract/llama-checks.js";
import { maskChecks } from "./contract/mask-checks.js";
import { optimChecks } from "./contract/optim-checks.js";
import { clipChecks } from "./contract/clip-checks.js";
import { positionChecks } from "./contract/position-checks.js";
import { softmaxChecks } from "./contract/softmax-checks.js";

// biome-ignore lint/suspicious/noExplicitAny: any executor, whatever its value type
export type AnyExecutor = Executor<any>;
export type ExecutorFactory = () => AnyExecutor | Promise<AnyExecutor>;

/**
 * Declares the contract suite for one executor.
 * @param name shown in the suite's title
 * @param make returns a new executor with its built-in kernels registered; called once for the suite and again for
 *   tests that change an executor's state (a refused second registration)
 */
export function describeExecutorContract(name: string, make: ExecutorFactory): void {
  describe(`executor contract: ${name}`, () => {
    const made: AnyExecutor[] = [];
    const fresh = async (): Promise<AnyExecutor> => {
      const ex = await make();
      made.push(ex);
      await ex.init?.();
      return ex;
    };
    let harness: Harness | undefined;
    const ctx: ContractContext = {
      get h(): Harness {
        if (!harness) throw new Error("executor contract: the executor is not ready (did its factory or init() fail?)");
        return harness;
      },
      fresh,
    };

    beforeAll(async () => {
      harness = new Harness(await fresh());
    });
    afterAll(async () => {
      for (const ex of made) await ex.dispose?.();
    });

    describe("contract", () => contractChecks(ctx));
    describe("projection, score, weighted-sum and views", () => linearChecks(ctx));
    describe("mask", () => maskChecks(ctx));
    describe("softmax", () => softmaxChecks(ctx));
    describe("dropout", () => dropoutChecks(ctx));
    describe("position encodings: alibi and rope", () => positionChecks(ctx));
    describe("attention composed from dispatch calls", () => attentionChecks(ctx));
    describe("transformer block ops: layer-norm, gelu, relu, add, embedding, cross-entropy, user masks", () =>
      blockChecks(ctx));
    describe("Llama block ops: rms-norm, silu, mul and their gradients", () => llamaChecks(ctx));
    describe("fused block ops: linear-gelu, add-layer-norm", () => fusedBlockChecks(ctx));
    describe("backward ops", () => backwardChecks(ctx));
    describe("fused attention backward: attention-lse, attention-grad", () => attentionGradChecks(ctx));
    describe("optimizer ops", () => optimChecks(ctx));
    describe("gradient clipping and the learning-rate factor", () => clipChecks(ctx));
  });
}
