// The contract itself, independent of numerics: version, `supports` that never throws, loud failures for unknown
// ops, one kernel per op, and upload/download that round-trip any view.
import { expect, it } from "vitest";
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { builtinOps } from "@attngraph/graph";
import { sampleAttrs } from "./attrs.js";
import type { ContractContext } from "./context.js";
import { expectExact, thrown } from "./harness.js";
import { createRng, randomTensor } from "./prng.js";

export function contractChecks(ctx: ContractContext): void {
  it("is a version 1 executor with a name", () => {
    expect(ctx.h.executor.specVersion).toBe(1);
    expect(typeof ctx.h.executor.name).toBe("string");
    expect(ctx.h.executor.name.length).toBeGreaterThan(0);
  });

  it("supports every built-in op kind (one declared by its elementwise expression, through the pointwise kernel)", () => {
    const missing = builtinOps
      .map((op) =>
        op.pointwise
          ? (["pointwise", { expr: op.pointwise({}) }] as const)
          : ([op.kind, sampleAttrs[op.kind] ?? {}] as const),
      )
      .map(([kind, a]) => [kind, ctx.h.executor.supports(kind, a)] as const)
      .filter(([, s]) => !s.ok)
      .map(([kind, s]) => `${kind} (${s.ok ? "" : s.reason})`);
    expect(missing, "built-in ops without a kernel").toEqual([]);
  });

  it('supports("no-such-op") answers ok: false with a reason, without throwing', () => {
    let s: ReturnType<typeof ctx.h.executor.supports> | undefined;
    expect(() => (s = ctx.h.executor.supports("no-such-op", {}))).not.toThrow();
    expect(s?.ok).toBe(false);
    expect(s && !s.ok ? s.reason.length : 0).toBeGreaterThan(0);
  });

  it('dispatching an unknown kind fails with an AttnGraphError of code "unsupported"', async () => {
    const x = await ctx.h.upload(Tensor.from([1, 2, 3], [3]));
    const e = await thrown(() => ctx.h.dispatch("no-such-op", {}, [x], [3]));
    expect(AttnGraphError.isInstance(e), `expected an AttnGraphError, got ${String(e)}`).toBe(true);
    expect((e as AttnGraphError).code).toBe("unsupported");
    expect((e as AttnGraphError).message).toContain("no-such-op");
  });

  it("refuses a second kernel for softmax and keeps the first", async () => {
    const ex = await ctx.fresh();
    const impostor = () => {
      throw new Error("contract: the impostor softmax kernel must never run");
    };
    let e: unknown;
    try {
      ex.registerKernel("softmax", impostor);
    } catch (err) {
      e = err;
    }
    expect(AttnGraphError.isInstance(e), `expected an AttnGraphError, got ${String(e)}`).toBe(true);
    expect((e as Error).message).toContain("softmax");
    // The original kernel still answers.
    const x = await ex.upload(Tensor.from([0, Math.log(3)], [1, 2]));
    const out = await ex.download(
      await ex.dispatch({
        kind: "softmax",
        node: "contract.softmax",
        attrs: { scale: 1 },
        inputs: [x],
        outShape: [1, 2],
      }),
    );
    expect(Array.from(out.toFloat32Array(), (v) => Math.round(v * 1e6) / 1e6)).toEqual([0.25, 0.75]);
  });

  it("round-trips tensors through upload and download, views included", async () => {
    const rng = createRng(1);
    const t = randomTensor(rng, [2, 3, 4]);
    expectExact(
      await ctx.h.download(await ctx.h.upload(t)),
      { shape: t.shape, data: t.toFloat32Array() },
      "upload/download",
    );
    const view = t.permute([2, 0, 1]); // a strided view [4, 2, 3]
    expectExact(
      await ctx.h.download(await ctx.h.upload(view)),
      { shape: view.shape, data: view.toFloat32Array() },
      "upload/download of a view",
    );
    const special = Tensor.from([NaN, Infinity, -Infinity, -0, 3.4e38, 1e-45], [6]);
    expectExact(
      await ctx.h.download(await ctx.h.upload(special)),
      { shape: [6], data: special.toFloat32Array() },
      "upload/download of specials",
    );
  });
}
