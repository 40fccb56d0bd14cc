// One state_dict for a model's full graph and its decode graph: the kv-append caches of `decode: true` are the decode
// session's own state, so loadStateDict neither expects them nor passes them on (compileDecoder refuses a cache given
// as a weight), and a checkpoint that holds one is an unexpected key as any other.
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { compile, compileDecoder } from "@attngraph/runtime";
import { Tensor } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { thrownError } from "@attngraph/testkit/test-helpers";
import { transformerBlock } from "./block.js";
import { defaultInit } from "./init.js";
import { loadStateDict, StateDictError } from "./state-dict.js";

const config = { embedDim: 8, nHeads: 2, causal: true };
const full = transformerBlock(config);
const decode = transformerBlock(config, { decode: true });
const stateDict = defaultInit(full, 3);
const caches = ["attention.k.cache.state", "attention.v.cache.state"];

describe("loadStateDict on a decode graph", () => {
  it("the decode graph declares its caches as weights, and the full graph's state_dict loads into it unchanged", () => {
    expect(decode.weights.map((w) => w.name)).toEqual(expect.arrayContaining(caches));
    const loaded = loadStateDict(decode, stateDict);
    expect(Object.keys(loaded).sort()).toEqual(Object.keys(loadStateDict(full, stateDict)).sort());
    for (const c of caches) expect(loaded).not.toHaveProperty(c);
  });

  it("a cache in the state_dict is unexpected under strict, and dropped (not passed on) with strict: false", () => {
    const withCache = { ...stateDict, [caches[0]!]: Tensor.zeros([1, 2, 4, 4]) };
    const error = thrownError(() => loadStateDict(decode, withCache));
    expect(error).toBeInstanceOf(StateDictError);
    expect((error as StateDictError).unexpected).toEqual([caches[0]]);
    expect((error as StateDictError).missing).toEqual([]);
    expect(loadStateDict(decode, withCache, { strict: false })).not.toHaveProperty(caches[0]!);
  });

  it("a missing real weight is still missing (the caches are never listed)", () => {
    const { "ln1.weight": _, ...rest } = stateDict;
    const error = thrownError(() => loadStateDict(decode, rest));
    expect((error as StateDictError).missing).toEqual(["ln1.weight"]);
  });

  it("what it loads compiles as a decoder, which gives the full graph's outputs position by position", async () => {
    const x = new Tensor(
      Float32Array.from({ length: 4 * 8 }, (_, i) => Math.sin(i)),
      [1, 4, 8],
    );
    const s = await compile(full, { executors: [createCpuExecutor()], weights: loadStateDict(full, stateDict) });
    const want = (await s.run({ x })).output!.toFloat32Array();
    await s.dispose();
    const dec = await compileDecoder(decode, {
      executors: [createCpuExecutor()],
      weights: loadStateDict(decode, stateDict),
      maxLength: 4,
    });
    const got: number[] = [];
    for (let t = 0; t < 4; t++)
      got.push(
        ...(
          await dec.step({ x: new Tensor(x.toFloat32Array().slice(t * 8, (t + 1) * 8), [1, 1, 8]) })
        ).output!.toFloat32Array(),
      );
    await dec.dispose();
    for (let i = 0; i < want.length; i++) expect(Math.abs(got[i]! - want[i]!)).toBeLessThan(1e-5);
  });
});
