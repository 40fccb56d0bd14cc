// The fused attention, attention-lse and attention-grad (wrt q, k, v) with score and mask modifications on wasm (the
// block program run per score tile, expr-program.ts) against a float64 reference written from the ops' definition
// (graph ops/attention-mods.ts, attention-grad.ts): the expressions evaluated by compileExpr (the reference semantics),
// softmax, dropout and products in float64. Each golden-flex variant (causal as a mask, ALiBi, softcap, relative bias
// table, document ids, prefix LM, a keep mask), then GQA, L ≠ S, padding and dropout combined; laziness of `where`,
// `and`, `or` for reads; float indices; integer mod; an index out of range as the reference's ExprIndexError; one
// thread and two; chunked calls.
import { describe, expect, it } from "vitest";
import { checkExpr, compileExpr, ExprIndexError, type Expr, type ExprFn, type GatheredTensor } from "@attngraph/graph";
import { Tensor, type Shape } from "@attngraph/tensor";
import { flexForward64, flexGrad64, type Flex64, type HeadDims } from "@attngraph/testkit";
import { random, wasmExecutor, worst } from "../test-util.js";
import { runHostCall } from "../test-host-call.js";
import type { WasmExecutor } from "../executor.js";

const one = await wasmExecutor({ flavour: "simd" });
const two = await wasmExecutor({ flavour: "simd", threads: 2, parallelWork: 1 });
const chunked = await wasmExecutor({ flavour: "simd", chunkWork: 20_000 });

interface ModCase extends HeadDims {
  readonly label: string;
  readonly Dv: number;
  readonly scale: number;
  readonly causal?: boolean;
  readonly window?: number;
  readonly alignment?: "top-left" | "bottom-right";
  readonly pad?: (b: number, j: number) => number;
  readonly dropout?: { readonly rate: number; readonly seed: number };
  readonly scoreMod?: unknown;
  readonly maskMod?: unknown;
  readonly gathered?: Readonly<Record<string, Tensor>> | undefined;
}

const call = (op: string, ...args: unknown[]) => ({ op, args });
const read = (name: string, ...index: unknown[]) => ({ op: "input", name, index });
const causalMask = call("ge", "q", "kv");

/** Everything one case needs: inputs, and the reference's outputs. */
interface Made {
  readonly c: ModCase;
  readonly q: Tensor;
  readonly k: Tensor;
  readonly v: Tensor;
  readonly grad: Tensor;
  readonly pad: Tensor | undefined;
  readonly names: readonly string[];
  readonly gathered: readonly Tensor[];
  readonly ref: { out: Float64Array; lse: Float64Array; dq: Float64Array; dk: Float64Array; dv: Float64Array };
}

function compile(
  e: unknown,
  role: "score" | "mask",
  inputs: ReadonlyMap<string, GatheredTensor>,
  subject: string,
): { fn: ExprFn; expr: Expr } {
  const ranks = new Map([...inputs].map(([n, t]) => [n, t.shape.length]));
  const { expr } = checkExpr(e, { subject, role, inputs: ranks });
  return { fn: compileExpr(expr, inputs, subject), expr };
}

/** The float64 reference of the ops' definition (@attngraph/testkit's flex64, shared with the webgpu executor's tests). */
function reference(
  c: ModCase,
  q: Tensor,
  k: Tensor,
  v: Tensor,
  grad: Tensor,
  pad: Tensor | undefined,
  node: string,
): Made["ref"] {
  const inputs = new Map(
    Object.entries(c.gathered ?? {}).map(([n, t]) => [
      n,
      { data: t.toFloat32Array(), shape: t.shape, strides: t.strides, offset: 0 } as GatheredTensor,
    ]),
  );
  const f: Flex64 = {
    dims: { B: c.B, H: c.H, Hkv: c.Hkv, L: c.L, S: c.S, D: c.D, Dv: c.Dv },
    q: q.toFloat32Array(),
    k: k.toFloat32Array(),
    v: v.toFloat32Array(),
    causal: c.causal ?? false,
    window: c.window ?? null,
    alignment: c.alignment ?? "top-left",
    scale: c.scale,
    ...(pad ? { pad: pad.toFloat32Array() } : {}),
    ...(c.dropout ? { dropout: c.dropout } : {}),
    scoreMod: c.scoreMod !== undefined ? compile(c.scoreMod, "score", inputs, `${node}.scoreMod`).expr : null,
    maskMod: c.maskMod !== undefined ? compile(c.maskMod, "mask", inputs, `${node}.maskMod`).expr : null,
    gathered: inputs,
  };
  return { ...flexForward64(f), ...flexGrad64(f, grad.toFloat32Array()) };
}

function make(c: ModCase, seed: number): Made {
  const q = random([c.B, c.H, c.L, c.D], seed, 1.5);
  const k = random([c.B, c.Hkv, c.S, c.D], seed + 1, 1.5);
  const v = random([c.B, c.Hkv, c.S, c.Dv], seed + 2);
  const grad = random([c.B, c.H, c.L, c.Dv], seed + 3);
  const pad = c.pad
    ? Tensor.from(
        Array.from({ length: c.B * c.S }, (_, e) => c.pad!(Math.floor(e / c.S), e % c.S)),
        [c.B, c.S],
      )
    : undefined;
  const names = Object.keys(c.gathered ?? {});
  return {
    c,
    q,
    k,
    v,
    grad,
    pad,
    names,
    gathered: names.map((n) => c.gathered![n]!),
    ref: reference(c, q, k, v, grad, pad, "attn"),
  };
}

function attrs(m: Made): Record<string, unknown> {
  const c = m.c;
  return {
    causal: c.causal ?? false,
    window: c.window ?? null,
    alignment: c.alignment ?? "top-left",
    scale: c.scale,
    dropoutRate: c.dropout?.rate ?? 0,
    dropoutSeed: c.dropout?.seed ?? 0,
    training: c.dropout !== undefined,
    scoreMod: c.scoreMod ?? null,
    maskMod: c.maskMod ?? null,
    inputs: m.names,
  };
}

/** Dispatches on `ex` as node "attn" (with a signal on the chunked executor, awaiting its answer), downloads, releases. */
const run = (
  ex: WasmExecutor,
  kind: string,
  attrs: Record<string, unknown>,
  inputs: readonly (Tensor | undefined)[],
  outShape: Shape,
): Promise<Tensor> =>
  runHostCall(
    ex,
    { kind, node: "attn", attrs, inputs, outShape },
    ex === chunked ? new AbortController().signal : undefined,
  );

const forward = (ex: WasmExecutor, m: Made) =>
  run(ex, "attention", attrs(m), [m.q, m.k, m.v, m.pad, ...m.gathered], [m.c.B, m.c.H, m.c.L, m.c.Dv]);
const lseOf = (ex: WasmExecutor, m: Made) => {
  const { dropoutRate: _r, dropoutSeed: _s, training: _t, ...a } = attrs(m);
  return run(ex, "attention-lse", a, [m.q, m.k, m.pad, ...m.gathered], [m.c.B, m.c.H, m.c.L]);
};
const gradOf = (ex: WasmExecutor, m: Made, wrt: "q" | "k" | "v") => {
  const shape = wrt === "q" ? m.q.shape : wrt === "k" ? m.k.shape : m.v.shape;
  const out = new Tensor(Float32Array.from(m.ref.out), [m.c.B, m.c.H, m.c.L, m.c.Dv]);
  const lse = new Tensor(Float32Array.from(m.ref.lse), [m.c.B, m.c.H, m.c.L]);
  return run(
    ex,
    "attention-grad",
    { ...attrs(m), wrt },
    [m.q, m.k, m.v, out, m.grad, lse, m.pad, ...m.gathered],
    shape,
  );
};

const ABS = 5e-5;
const REL = 5e-4;
function expectNear(got: Tensor, want: Float64Array, label: string): void {
  expect(worst(got, new Tensor(Float32Array.from(want), got.shape), ABS, REL), label).toBeLessThan(1);
}

async function expectAll(ex: WasmExecutor, m: Made, label: string): Promise<void> {
  expectNear(await forward(ex, m), m.ref.out, `${label}: out`);
  const lse = await lseOf(ex, m);
  const lseData = lse.toFloat32Array();
  m.ref.lse.forEach((w, r) => {
    if (w === -Infinity) expect(lseData[r], `${label}: lse row ${r} sees no key`).toBe(-Infinity);
  });
  expectNear(lse, m.ref.lse, `${label}: lse`);
  expectNear(await gradOf(ex, m, "q"), m.ref.dq, `${label}: dq`);
  expectNear(await gradOf(ex, m, "k"), m.ref.dk, `${label}: dk`);
  expectNear(await gradOf(ex, m, "v"), m.ref.dv, `${label}: dv`);
}

const T = 80;
const slopes = (H: number) =>
  Tensor.from(
    Array.from({ length: H }, (_, h) => 2 ** -(h + 1)),
    [H],
  );
const alibi = call("add", "score", call("mul", read("slopes", "h"), call("sub", "kv", "q")));
const docs = (B: number, n: number) =>
  Tensor.from(
    Array.from({ length: B * n }, (_, e) => Math.floor((e % n) / (13 + 7 * Math.floor(e / n)))),
    [B, n],
  );
const sameDoc = call("eq", read("doc", "b", "q"), read("doc", "b", "kv"));

/** A relative position bias (T5's kind): score + bias[h, q − kv + T − 1], from a gathered table [H, `length`] (2T − 1 fits). */
function relativeBias(label: string, length: number): ModCase {
  return {
    label,
    B: 1,
    H: 2,
    Hkv: 2,
    L: T,
    S: T,
    D: 8,
    Dv: 8,
    scale: 0.35,
    scoreMod: call("add", "score", read("bias", "h", call("add", call("sub", "q", "kv"), T - 1))),
    gathered: { bias: random([2, length], 77) },
  };
}

const CASES: readonly ModCase[] = [
  {
    label: "causal as a mask modification ge(q, kv), L = S = 150",
    B: 2,
    H: 2,
    Hkv: 2,
    L: 150,
    S: 150,
    D: 16,
    Dv: 16,
    scale: 0.25,
    maskMod: causalMask,
  },
  {
    label: "ALiBi, slopes gathered per head, GQA 4/2, causal mask",
    B: 1,
    H: 4,
    Hkv: 2,
    L: 100,
    S: 100,
    D: 8,
    Dv: 8,
    scale: 0.35,
    scoreMod: alibi,
    maskMod: causalMask,
    gathered: { slopes: slopes(4) },
  },
  {
    label: "softcap tanh(score / 2) · 2, causal bottom-right, L 70, S 130",
    B: 1,
    H: 2,
    Hkv: 2,
    L: 70,
    S: 130,
    D: 12,
    Dv: 9,
    scale: 0.5,
    causal: true,
    alignment: "bottom-right",
    scoreMod: call("mul", call("tanh", call("div", "score", 2)), 2),
  },
  relativeBias("relative bias table [H, 2T − 1] gathered", 2 * T - 1),
  {
    label: "document ids [B, T] with eq, and causal",
    B: 2,
    H: 2,
    Hkv: 2,
    L: T,
    S: T,
    D: 8,
    Dv: 8,
    scale: 0.35,
    maskMod: call("and", sameDoc, causalMask),
    gathered: { doc: docs(2, T) },
  },
  {
    label: "prefix LM: or(kv < prefix[b], q >= kv), 130 keys",
    B: 2,
    H: 2,
    Hkv: 2,
    L: 130,
    S: 130,
    D: 16,
    Dv: 16,
    scale: 0.25,
    maskMod: call("or", call("lt", "kv", read("prefix", "b")), causalMask),
    gathered: { prefix: Tensor.from([40, 70], [2]) },
  },
  {
    label: "a keep mask [B, H, L, S], L 70, S 90",
    B: 2,
    H: 2,
    Hkv: 2,
    L: 70,
    S: 90,
    D: 8,
    Dv: 8,
    scale: 0.35,
    maskMod: call("gt", read("keep", "b", "h", "q", "kv"), -0.6),
    gathered: { keep: random([2, 2, 70, 90], 5) },
  },
  {
    label: "ALiBi + documents with GQA 4/2, L 90 ≠ S 140, padding, dropout 0.2",
    B: 2,
    H: 4,
    Hkv: 2,
    L: 90,
    S: 140,
    D: 8,
    Dv: 12,
    scale: 0.4,
    pad: (b, j) => (b === 1 && j % 7 === 3 ? 1 : 0),
    dropout: { rate: 0.2, seed: 99 },
    scoreMod: alibi,
    maskMod: call("eq", read("doc", "b", call("min", "q", 139)), read("doc", "b", "kv")),
    gathered: { slopes: slopes(4), doc: docs(2, 140) },
  },
  {
    label: "window 20 + causal built in, scoreMod with exp, log, sqrt, sigmoid, abs, max",
    B: 1,
    H: 2,
    Hkv: 1,
    L: 100,
    S: 100,
    D: 8,
    Dv: 8,
    scale: 0.3,
    causal: true,
    window: 20,
    scoreMod: call(
      "add",
      call("max", "score", call("neg", call("sqrt", call("abs", "score")))),
      call(
        "mul",
        0.1,
        call(
          "sub",
          call("sigmoid", "score"),
          call("log", call("add", 1.5, call("exp", call("neg", call("abs", "score"))))),
        ),
      ),
    ),
  },
  {
    label:
      "where reads its branch only where taken (a table of 10 read at kv < 10), mod by a literal and by a variable",
    B: 1,
    H: 2,
    Hkv: 2,
    L: 40,
    S: 70,
    D: 8,
    Dv: 8,
    scale: 0.3,
    scoreMod: call(
      "where",
      call("lt", "kv", 10),
      call("add", "score", read("tbl", "kv")),
      call("sub", "score", call("mod", "kv", call("add", "h", 2))),
    ),
    maskMod: call(
      "or",
      call("ne", call("mod", call("sub", "q", "kv"), 3), 0),
      call("and", call("lt", "kv", 10), call("gt", read("tbl", "kv"), 0)),
    ),
    gathered: { tbl: random([10], 3) },
  },
  {
    label: "a gathered value as an index (bias[doc[b, kv]]) and floor of a number",
    B: 2,
    H: 2,
    Hkv: 2,
    L: 50,
    S: 60,
    D: 8,
    Dv: 8,
    scale: 0.3,
    scoreMod: call(
      "add",
      "score",
      call("add", read("bias", read("doc", "b", "kv")), call("mul", 0.01, call("floor", call("div", "kv", 7)))),
    ),
    gathered: { doc: docs(2, 60), bias: random([5], 11) },
  },
  {
    label: "a read the same in every lane of a tile, made once, and only where taken (slopes[h + 100] never is)",
    B: 1,
    H: 3,
    Hkv: 1,
    L: 70,
    S: 70,
    D: 8,
    Dv: 8,
    scale: 0.3,
    scoreMod: call(
      "where",
      call("lt", "kv", -1),
      call("add", "score", read("slopes", call("add", "h", 100))),
      call("add", "score", call("mul", read("slopes", "h"), "q")),
    ),
    gathered: { slopes: slopes(3) },
  },
  {
    // Every instruction once: integer and float forms of add, sub, mul, min, max, neg, abs, mod and the comparisons,
    // where of integers, of numbers and of masks, not, and literals outside int32 and −0 (computed as floats).
    label: "every operation, integer and float forms",
    B: 1,
    H: 2,
    Hkv: 2,
    L: 30,
    S: 40,
    D: 8,
    Dv: 8,
    scale: 0.5,
    scoreMod: call(
      "add",
      call(
        "add",
        call("min", "score", call("mul", 0.5, call("max", "kv", "q"))),
        call(
          "mul",
          0.001,
          call("abs", call("neg", call("sub", call("mul", "q", 3), call("min", "kv", call("max", "h", 1))))),
        ),
      ),
      call(
        "where",
        call("not", call("le", "q", "kv")),
        call("mul", 0.01, call("where", call("gt", "score", 0), call("mod", "kv", 4), call("abs", call("neg", "h")))),
        call("sub", call("mul", "score", -0), call("div", call("mod", call("sub", "q", 17), -5), 3e9)),
      ),
    ),
    maskMod: call(
      "where",
      call("ge", "kv", 2),
      call("or", call("lt", call("mul", "q", 1.5), call("add", "kv", 20)), call("eq", "h", 1)),
      call("ne", call("mod", "kv", 2), call("neg", 0)),
    ),
  },
];

describe("fused attention with modifications on wasm against the float64 reference", () => {
  CASES.forEach((c, n) => {
    const m = make(c, 300 + 10 * n);
    it(`${c.label} (1 thread)`, () => expectAll(one, m, c.label));
    it(`${c.label} (2 threads)`, () => expectAll(two, m, c.label));
  });
  it("chunked calls (with a signal, many small steps) give the same numbers", async () => {
    for (const c of [CASES[1]!, CASES[7]!]) await expectAll(chunked, make(c, 900), `${c.label}, chunked`);
  });
});

describe("what depends only on b and h runs once per tile (uniform instructions), the rest per lane", () => {
  // ALiBi's slopes as a tree of `where` over h (the fusion pass's form), a mask that is uniform per head (hides
  // every key of head 0: its rows see nothing), and one that mixes a uniform and a per-lane part; the uniform values
  // reach per-lane instructions, the derivative and the kernel's outputs.
  const slope = call(
    "where",
    call("lt", "h", 1),
    0.5,
    call("where", call("lt", call("add", "h", "b"), 2), 0.25, 0.125),
  );
  const cases: ModCase[] = [
    {
      label: "ALiBi slopes by where over h, uniform mask",
      B: 2,
      H: 3,
      Hkv: 3,
      L: 70,
      S: 70,
      D: 8,
      Dv: 8,
      scale: 0.3,
      scoreMod: call("add", "score", call("mul", slope, call("sub", "kv", "q"))),
      maskMod: call("gt", "h", 0),
    },
    {
      label: "a uniform factor of the score, a mixed mask",
      B: 1,
      H: 3,
      Hkv: 1,
      L: 40,
      S: 75,
      D: 8,
      Dv: 8,
      scale: 0.3,
      scoreMod: call("mul", "score", call("add", slope, 1)),
      maskMod: call("or", call("eq", "h", 1), call("ge", "q", "kv")),
    },
  ];
  cases.forEach((c, n) => {
    const m = make(c, 700 + n);
    it(`${c.label} (1 thread)`, () => expectAll(one, m, c.label));
    it(`${c.label} (2 threads)`, () => expectAll(two, m, c.label));
  });
});

describe("tanh runs on four lanes at once (a float32 polynomial and exp), close to the float64 reference", () => {
  // One query row per x: q = x, one key k = 1 (D = 1, scale 1), so the score is x; a second key scores 0. With
  // v = [1, 0] the output is e^{tanh x} / (e^{tanh x} + 1): tanh x read back through the softmax.
  const xs = [
    0,
    -0,
    1e-30,
    -3e-8,
    1e-4,
    0.3,
    -0.6249,
    0.625,
    -0.63,
    1,
    -2.5,
    4.2,
    8.9,
    -9.5,
    30,
    -100,
    3e38,
    Infinity,
    -Infinity,
    NaN,
  ];
  it("over small, medium, large, infinite and NaN scores", async () => {
    const L = xs.length;
    const q = Tensor.from(xs, [1, 1, L, 1]);
    const k = Tensor.from([1, 1], [1, 1, 2, 1]);
    const v = Tensor.from([1, 0], [1, 1, 2, 1]);
    const scoreMod = call("where", call("eq", "kv", 0), call("tanh", "score"), 0);
    const out = (
      await run(
        one,
        "attention",
        { scoreMod }, // the other attributes their declared defaults
        [q, k, v, undefined],
        [1, 1, L, 1],
      )
    ).toFloat32Array();
    xs.forEach((x, i) => {
      const t = Math.tanh(x);
      const want = Math.exp(t) / (Math.exp(t) + 1);
      if (Number.isNaN(x)) expect(out[i], "a NaN score makes its row NaN").toBeNaN();
      else expect(Math.abs(out[i]! - want), `tanh(${x})`).toBeLessThan(3e-7);
    });
  });
});

describe("a read along kv whose other indices follow the row (mask[q, kv], bias[h, q, kv]) takes whole rows at once", () => {
  // Rows wider than a tile (S = 150): full rows take the contiguous path, the block's last partial one and the rows a
  // causal mask cuts take the per-lane one; both must give the reference's numbers.
  const keep = Tensor.from(
    Array.from({ length: 70 * 150 }, (_, e) => ((e * 7919) % 11 === 3 ? 0 : 1)),
    [70, 150],
  );
  const bias = random([3, 70, 150], 91, 0.5);
  const cases: ModCase[] = [
    {
      label: "a 0/1 mask [L, S]",
      B: 1,
      H: 2,
      Hkv: 2,
      L: 70,
      S: 150,
      D: 8,
      Dv: 8,
      scale: 0.3,
      maskMod: call("ne", read("keep", "q", "kv"), 0),
      gathered: { keep },
    },
    {
      label: "a bias [H, L, S] with causal bottom-right",
      B: 2,
      H: 3,
      Hkv: 1,
      L: 70,
      S: 150,
      D: 8,
      Dv: 8,
      scale: 0.3,
      causal: true,
      alignment: "bottom-right",
      scoreMod: call("add", "score", read("bias", "h", "q", "kv")),
      gathered: { bias },
    },
  ];
  cases.forEach((c, n) => {
    const m = make(c, 800 + n);
    it(`${c.label} (1 thread)`, () => expectAll(one, m, c.label));
    it(`${c.label} (2 threads)`, () => expectAll(two, m, c.label));
  });
});

describe("the fused forward equals the unfused chain on wasm (score → score-mod → mask-mod → softmax → weighted-sum)", () => {
  const unfused = async (m: Made): Promise<Tensor> => {
    const { B, H, L, S, Dv, scale } = m.c;
    const reading = (e: unknown) => m.names.filter((n) => JSON.stringify(e ?? null).includes(`"name":"${n}"`));
    const slots = (names: readonly string[]) => names.map((n) => m.gathered[m.names.indexOf(n)]!);
    let x = await run(one, "score", {}, [m.q, m.k], [B, H, L, S]);
    if (m.c.scoreMod !== undefined)
      x = await run(
        one,
        "score-mod",
        { scale, expr: m.c.scoreMod, inputs: reading(m.c.scoreMod) },
        [x, ...slots(reading(m.c.scoreMod))],
        [B, H, L, S],
      );
    if (m.c.maskMod !== undefined)
      x = await run(
        one,
        "mask-mod",
        { expr: m.c.maskMod, inputs: reading(m.c.maskMod) },
        [x, ...slots(reading(m.c.maskMod))],
        [B, H, L, S],
      );
    const w = await run(one, "softmax", { scale: m.c.scoreMod !== undefined ? 1 : scale }, [x], [B, H, L, S]);
    return run(one, "weighted-sum", {}, [w, m.v], [B, H, L, Dv]);
  };
  for (const n of [0, 1, 3, 4, 5, 6]) {
    // the cases without a built-in mask, padding or dropout (the chain has none here)
    it(CASES[n]!.label, async () => {
      const m = make(CASES[n]!, 40 + n);
      const fused = await forward(one, m);
      expect(worst(fused, await unfused(m), 2e-5, 2e-4), "fused vs unfused").toBeLessThan(1);
    });
  }
});

describe("an index out of range is the reference's ExprIndexError", () => {
  // The relative bias table one entry too short: q − kv + T − 1 reaches 2T − 2 at q = T − 1, kv = 0.
  const c = relativeBias("short table", 2 * T - 2);
  const m: Made = {
    ...make({ ...c, scoreMod: undefined, gathered: undefined }, 5),
    c,
    names: ["bias"],
    gathered: [c.gathered!["bias"]!],
  };
  const expectIndexError = async (p: Promise<unknown>) => {
    const e = await p.then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(ExprIndexError);
    expect((e as Error).message).toContain("attn.scoreMod.args[1]: gathered index 158 on axis 1 is out of range");
    expect((e as Error).message).toContain("expected an integer in [0, 158)");
  };
  for (const [name, ex] of [
    ["1 thread", one],
    ["2 threads", two],
    ["chunked", chunked],
  ] as const) {
    it(`forward, lse and grad (${name})`, async () => {
      await expectIndexError(forward(ex, m));
      await expectIndexError(lseOf(ex, m));
      for (const wrt of ["q", "k", "v"] as const) await expectIndexError(gradOf(ex, m, wrt));
      // The executor is still usable, and a good call after a failed one is right.
      const good = make(CASES[3]!, 1);
      expectNear(await forward(ex, good), good.ref.out, "after the error");
    });
  }
  it("the reference names the same sub-expression", () => {
    const inputs = new Map([
      [
        "bias",
        {
          data: c.gathered!["bias"]!.toFloat32Array(),
          shape: [2, 2 * T - 2],
          strides: [2 * T - 2, 1],
          offset: 0,
        } as GatheredTensor,
      ],
    ]);
    const f = compile(c.scoreMod, "score", inputs, "attn.scoreMod").fn;
    expect(() => f(0, 0, 0, T - 1, 0)).toThrow("attn.scoreMod.args[1]: gathered index 158 on axis 1 is out of range");
  });
  it("a read the same in every lane out of range (slopes[h + 1] at the last head)", async () => {
    const bad: ModCase = { ...CASES[1]!, scoreMod: call("add", "score", read("slopes", call("add", "h", 1))) };
    const mb: Made = {
      ...make({ ...bad, scoreMod: undefined, gathered: undefined }, 5),
      c: bad,
      names: ["slopes"],
      gathered: [bad.gathered!["slopes"]!],
    };
    for (const ex of [one, two]) {
      const e = await forward(ex, mb).then(
        () => undefined,
        (x: unknown) => x,
      );
      expect(e).toBeInstanceOf(ExprIndexError);
      expect((e as Error).message).toContain(
        "attn.scoreMod.args[1]: gathered index 4 on axis 0 is out of range at b=0, h=3",
      );
    }
  });
  it("a non-integer float index (a gathered value) is an index error too", async () => {
    const bad: ModCase = {
      ...CASES[10]!,
      gathered: {
        doc: Tensor.from(
          Array.from({ length: 120 }, (_, e) => (e === 77 ? 1.5 : 0)),
          [2, 60],
        ),
        bias: random([5], 11),
      },
    };
    const mb: Made = {
      ...make({ ...bad, scoreMod: undefined, gathered: undefined }, 5),
      c: bad,
      names: ["doc", "bias"],
      gathered: [bad.gathered!["doc"]!, bad.gathered!["bias"]!],
    };
    const e = await forward(one, mb).then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(ExprIndexError);
    expect((e as Error).message).toContain("gathered index 1.5 on axis 0");
    expect((e as Error).message).toContain("b=1");
  });
});

describe("a gathered input's gradient", () => {
  it("is supported (the shared host loop over the module's memory; numbers: reliability's flex-fused.test.ts)", () => {
    const m = make(CASES[3]!, 1);
    expect(one.supports("attention-grad", { ...attrs(m), wrt: "g0" }).ok).toBe(true);
  });
});
