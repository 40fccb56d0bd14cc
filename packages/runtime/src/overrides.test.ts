// Writing into a run: per-run overrides and persistent patches replace a node's value for every reader downstream and
// for taps; a patched node is never fused away (and only the chain it sits in is unfused); bad overrides are typed
// errors naming the node, raised before any reader runs, and the session stays usable.
import { attentionWeights, buildAttention } from "@attngraph/attention";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { GraphValidationError } from "@attngraph/graph";
import { Tensor } from "@attngraph/tensor";
import { firstValueFrom, take, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { compile } from "./compile.js";
import { randomTensor, rawAttentionWeights } from "./test-random.js";
import type { SessionEvent } from "./events.js";
import { OverrideError } from "./overrides.js";

const config = { dIn: 8, dOut: 8, numHeads: 2, causal: true, outProj: true, outBias: true };
const raw = rawAttentionWeights(config);
const x = randomTensor([2, 4, 8], 9);
const session = () =>
  compile(buildAttention(config), { executors: [createCpuExecutor()], weights: attentionWeights(config, raw) });
const scaled = (t: Tensor, k: number) =>
  new Tensor(
    t.toFloat32Array().map((v) => v * k),
    t.shape,
  );
const bits = (t: Tensor) => Array.from(new Uint32Array(t.toFloat32Array().buffer.slice(0)));

describe("overrides and patches", () => {
  it("patching `weights` with its own value changes nothing, bit for bit; the plan unfuses that chain and says why", async () => {
    const s = await session();
    // Against the same lowering (a tap on `weights` unfuses the chain as a patch does; the fused kernel rounds otherwise).
    const sub = s.tap("weights").subscribe();
    const plain = await s.run({ x });
    sub.unsubscribe();
    const same = await s.run({ x }, { override: { weights: (w) => w } });
    expect(bits(same.output!)).toEqual(bits(plain.output!));
    expect(s.explain({ patched: ["weights"] })).toContain("kept unfused: context.heads (weights is patched)");
    expect(s.explain({ patched: ["weights"] })).toMatch(/^patched weights$/m);
    // A patch on the fused step's own output leaves the chain fused.
    expect(s.explain({ patched: ["context.heads"] })).toContain("→ attention");
  });

  it("readers downstream see the override: zero weights give a zero context, so the output is the bias", async () => {
    const s = await session();
    const zeros = Tensor.zeros([2, 2, 4, 4]);
    const out = (await s.run({ x }, { override: { weights: zeros } })).output!;
    const bias = raw.out_bias!.toFloat32Array();
    expect(Array.from(out.toFloat32Array())).toEqual(Array.from({ length: 2 * 4 * 8 }, (_, i) => bias[i % 8]!));
    // The next run without the override is the plain one again.
    expect(bits((await s.run({ x })).output!)).toEqual(bits((await (await session()).run({ x })).output!));
  });

  it("session.patch applies to every run until removed; patches run in order, then the run's own override", async () => {
    const s = await session();
    const plain = await s.run({ x });
    const seen: string[] = [];
    const remove1 = s.patch("weights", (w) => (seen.push("patch 1"), scaled(w, 0)));
    const remove2 = s.patch(
      "weights",
      (w) => (seen.push(`patch 2 sees ${w.toFloat32Array().every((v) => v === 0) ? "zeros" : "values"}`), w),
    );
    const patched = await s.run({ x }, { override: { weights: (w) => (seen.push("run override"), w) } });
    expect(seen).toEqual(["patch 1", "patch 2 sees zeros", "run override"]);
    expect(bits(patched.output!)).not.toEqual(bits(plain.output!));
    remove1();
    remove2();
    remove1(); // twice: nothing more happens
    expect(bits((await s.run({ x })).output!)).toEqual(bits(plain.output!));
  });

  it("a tap on a patched node sees the patched value", async () => {
    const s = await session();
    const tapped = firstValueFrom(s.tap("weights").pipe(take(1), toArray()));
    const half = Tensor.from(new Array(2 * 2 * 4 * 4).fill(0.25), [2, 2, 4, 4]);
    await s.run({ x }, { override: { weights: half } });
    const [event] = await tapped;
    expect(Array.from(event!.tensor.toFloat32Array()).every((v) => v === 0.25)).toBe(true);
  });

  it("a wrong shape, a throw, NaN or a non-tensor is an OverrideError naming the node, before any reader runs", async () => {
    const s = await session();
    const started: string[] = [];
    s.events$.subscribe((e: SessionEvent) => e.type === "node-start" && started.push(e.node));
    const cases: [unknown, RegExp][] = [
      [
        Tensor.zeros([2, 2, 4, 5]),
        /override of node weights: wrong shape, expected \[2, 2, 4, 4\], got \[2, 2, 4, 5\]/,
      ],
      [
        () => {
          throw new Error("boom");
        },
        /override of node weights: the override function threw, expected a tensor, got boom/,
      ],
      [
        (w: Tensor) => scaled(w, NaN),
        /override of node weights: NaN in the override's value where the node's value had none, .*got NaN at element 0/,
      ],
      [() => 3, /override of node weights: not a tensor/],
    ];
    for (const [override, message] of cases) {
      started.length = 0;
      const e = await s.run({ x }, { override: { weights: override as never } }).catch((err: unknown) => err);
      expect(e).toBeInstanceOf(OverrideError);
      expect((e as OverrideError).node).toBe("weights");
      expect((e as Error).message).toMatch(message);
      expect(started).not.toContain("context.heads"); // the weights' reader never started
    }
    expect((await s.run({ x })).output!.shape).toEqual([2, 4, 8]);
  });

  it("an override of a name that is no node, or of something that is neither tensor nor function, is refused up front", async () => {
    const s = await session();
    await expect(s.run({ x }, { override: { nope: Tensor.zeros([1]) } })).rejects.toThrow(GraphValidationError);
    await expect(s.run({ x }, { override: { x: Tensor.zeros([1]) } })).rejects.toThrow(
      /override x: an override must name a node of the graph/,
    );
    expect(() => s.patch("weights", 42 as never)).toThrow(OverrideError);
    expect(() => s.patch("weights", 42 as never)).toThrow(
      /patch: override of node weights: invalid override, expected a Tensor \(@attngraph\/tensor\) or a function/,
    );
    expect(() => s.patch("W_query", (w) => w)).toThrow(/patch W_query: an override must name a node/);
    expect((await s.run({ x })).output!.shape).toEqual([2, 4, 8]);
  });
});

describe("the README's ablation example", () => {
  it("zero-ablates head 1 and then unpatches", async () => {
    const session = await compile(buildAttention({ ...config, numHeads: 4 }), {
      executors: [createCpuExecutor()],
      weights: attentionWeights({ ...config, numHeads: 4 }, raw),
    });
    const plain = (await session.run({ x })).output!;
    // README: from here
    const ablate = session.patch("weights", (w) => {
      const [b, h, l, s] = w.shape as [number, number, number, number];
      const data = w.toFloat32Array().slice();
      for (let i = 0; i < b; i++) data.fill(0, (i * h + 1) * l * s, (i * h + 2) * l * s);
      return new Tensor(data, w.shape);
    });
    const { output } = await session.run({ x });
    ablate(); // later runs are unpatched again
    // README: to here
    expect(bits(output!)).not.toEqual(bits(plain));
    expect(bits((await session.run({ x })).output!)).toEqual(bits(plain));
  });
});

describe("overrides: what counts as a tensor, NaN, and stopping", () => {
  const duck = (t: Tensor) => ({
    shape: t.shape,
    dtype: "float32",
    data: t.toFloat32Array(),
    toFloat32Array: () => t.toFloat32Array(),
    strides: t.strides,
    offset: 0,
  });

  it("an object shaped like a tensor is not one: an OverrideError, as a value and as a function's result", async () => {
    const s = await session();
    const like = duck(Tensor.zeros([2, 2, 4, 4]));
    for (const override of [like, () => like]) {
      const e = await s.run({ x }, { override: { weights: override as never } }).catch((err: unknown) => err);
      expect(e).toBeInstanceOf(OverrideError);
      expect((e as Error).message).toMatch(
        /override of node weights: (invalid override|not a tensor), expected a .*Tensor.*, got an object \(shape, dtype, data, toFloat32Array\), not a Tensor/,
      );
    }
    expect(() => s.patch("weights", like as never)).toThrow(OverrideError);
    expect((await s.run({ x })).output!.shape).toEqual([2, 4, 8]);
  });

  it("NaN the run's own data carries passes through an identity and an ablation; NaN an override adds is refused", async () => {
    const s = await session();
    const poisoned = new Tensor(
      x.toFloat32Array().map((v, i) => (i === 3 ? NaN : v)),
      x.shape,
    );
    // The same plan as the identity's: `weights` kept unfused by a tap instead of a patch.
    const plain = await s.run(
      { x: poisoned },
      { override: { queries: (q) => q }, tap: { nodes: "weights", next: () => undefined } },
    );
    const identity = await s.run({ x: poisoned }, { override: { queries: (q) => q, weights: (w) => w } });
    expect(bits(identity.output!)).toEqual(bits(plain.output!));
    const zeroed = await s.run(
      { x: poisoned },
      {
        override: {
          queries: (q) =>
            new Tensor(
              q.toFloat32Array().map((v, i) => (i >= 8 ? 0 : v)),
              q.shape,
            ),
        },
      },
    );
    expect(Number.isNaN(zeroed.output!.toFloat32Array()[0]!)).toBe(true); // token 0 still NaN: it is the data's
    // A NaN where the value had a number: refused, naming the element.
    await expect(
      s.run(
        { x: poisoned },
        {
          override: {
            queries: (q) =>
              new Tensor(
                q.toFloat32Array().map((v, i) => (i === 9 ? NaN : v)),
                q.shape,
              ),
          },
        },
      ),
    ).rejects.toThrow(
      /override of node queries: NaN in the override's value where the node's value had none.*NaN at element 9/,
    );
    // A tensor override with NaN where the computed value had none: refused too.
    await expect(
      s.run(
        { x },
        {
          override: {
            queries: Tensor.from(
              Array.from({ length: 64 }, (_, i) => (i === 0 ? NaN : 0)),
              [2, 4, 8],
            ),
          },
        },
      ),
    ).rejects.toThrow(OverrideError);
  });

  it("an override whose promise never settles: the run's abort settles it at once, and dispose() does too", async () => {
    const s = await session();
    const never = () => new Promise<Tensor>(() => undefined);
    const controller = new AbortController();
    // Aborted once the override is waited on (a timer could fire before the run reaches it on a loaded machine).
    const abortThenHang = () => {
      setTimeout(() => controller.abort(new Error("timeout")), 0);
      return never();
    };
    const e = await s
      .run({ x }, { override: { weights: abortThenHang }, signal: controller.signal })
      .catch((err: unknown) => err);
    expect((e as Error).name).toBe("AbortError");
    expect((e as Error).message).toMatch(/run \d+: aborted during node weights/);
    await expect(s.run({ x }, { override: { weights: never }, signal: AbortSignal.abort() })).rejects.toThrow(
      /aborted/,
    );
    expect((await s.run({ x })).output!.shape).toEqual([2, 4, 8]); // the session is usable
    const disposeThenHang = () => {
      setTimeout(() => void s.dispose(), 0);
      return never();
    };
    await expect(s.run({ x }, { override: { weights: disposeThenHang } })).rejects.toThrow(/the session is disposed/);
  });

  it("setWeights(null) or a non-object is a typed error, not a silent no-op", async () => {
    const s = await session();
    expect(() => s.setWeights(null as never)).toThrow(GraphValidationError);
    expect(() => s.setWeights(null as never)).toThrow(
      /weights: invalid weights, expected an object of tensors by name, got null/,
    );
    expect(() => s.setWeights(5 as never)).toThrow(/invalid weights/);
  });
});
