// Property tests of the block ops on every executor, one dispatch at a time through the executor contract (upload,
// dispatch, download), against the float64 references of @attngraph/testkit: layer-norm (rows far from 0 included),
// gelu (both forms), add with random broadcasting, embedding, cross-entropy (ignored targets, every reduction) and the
// mask op's user mask and bias in every composition. The seed is fixed (ATTNGRAPH_FC_SEED explores more).
import type { Executor } from "@attngraph/graph";
import { Tensor, type AnyTensor } from "@attngraph/tensor";
import { add64, crossEntropy64, embedding64, gelu64, layerNorm64, maskFull64 } from "@attngraph/testkit";
import fc from "fast-check";
import { describe, it } from "vitest";
import { mismatch, toleranceFor, type Dense } from "./check.js";
import { executors } from "./executors.js";
import { prng as mulberry32 } from "./prng.js";
import { fcSettings } from "./settings.js";

/** An executor as compile() leaves it: initialised (a module loaded, a device requested). */
async function ready(made: Executor | Promise<Executor>): Promise<Executor> {
  const ex = await made;
  await ex.init?.();
  return ex;
}

/** Upload, dispatch one op as the runtime would, download. */
async function dispatch(
  ex: Executor,
  kind: string,
  attrs: Record<string, unknown>,
  inputs: readonly (AnyTensor | undefined)[],
  outShape: readonly number[],
): Promise<Dense> {
  const values = await Promise.all(inputs.map((t) => (t === undefined ? undefined : ex.upload(t))));
  const out = await ex.download(await ex.dispatch({ kind, node: `property.${kind}`, attrs, inputs: values, outShape }));
  return { shape: out.shape, data: out.toFloat32Array() };
}

/** Seeded normal values times `scale`, plus `offset`. */
function normals(seed: number, n: number, scale = 1, offset = 0): number[] {
  const u = mulberry32(seed);
  return Array.from(
    { length: n },
    () => offset + scale * Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u()),
  );
}

const f64 = (t: Tensor) => Float64Array.from(t.toFloat32Array());
const size = (s: readonly number[]) => s.reduce((a, d) => a * d, 1);

/** Seeded ids below `v`; with `ignored`, about 30% of them are the ignore index −100 instead (cross-entropy targets). */
function seededIds(seed: number, shape: number[], v: number, ignored = false): Tensor<"int32"> {
  const u = mulberry32(seed);
  return Tensor.int32(
    Array.from({ length: size(shape) }, () => (ignored && u() < 0.3 ? -100 : Math.floor(u() * v))),
    shape,
  );
}

function check(label: string, got: Dense, want: Dense, exact = false): void {
  const p = mismatch(label, got, want, exact ? { abs: 0, rel: 0 } : toleranceFor(want), true);
  if (p) throw new Error(p);
}

describe.each(executors.map((e) => [e.name, e] as const))(
  "%s: block ops against the float64 reference",
  (name, entry) => {
    const settings = () => {
      const { numRuns, ...rest } = fcSettings(100);
      return { ...rest, numRuns: Math.max(1, Math.round(numRuns * (entry.propertyShare ?? 1))) };
    };

    /** Checks `body` on a fresh, ready executor for every draw of `arbs`, with this executor's share of the runs. */
    async function forAll<Ts extends [unknown, ...unknown[]]>(
      arbs: { [K in keyof Ts]: fc.Arbitrary<Ts[K]> },
      body: (ex: Executor, ...args: Ts) => Promise<void>,
    ): Promise<void> {
      const ex = await ready(entry.create());
      await fc.assert(
        fc.asyncProperty<Ts>(...arbs, (...args: Ts) => body(ex, ...args)),
        settings(),
      );
    }

    it("layer-norm: any rows and width, affine or not, rows offset far from 0, strided input", async () => {
      await forAll(
        [
          fc.integer({ min: 1, max: 6 }),
          fc.integer({ min: 1, max: 40 }),
          fc.constantFrom(0, 1e3, 1e4),
          fc.boolean(),
          fc.boolean(),
          fc.nat(),
        ],
        async (ex, rows, e, offset, affine, strided, seed) => {
          const raw = Tensor.from(normals(seed, rows * e, 1, offset), strided ? [e, rows] : [rows, e]);
          const x = strided ? raw.permute([1, 0]) : raw;
          const w = affine ? Tensor.from(normals(seed + 1, e), [e]) : undefined;
          const b = affine ? Tensor.from(normals(seed + 2, e), [e]) : undefined;
          const got = await dispatch(ex, "layer-norm", { eps: 1e-5 }, [x, w, b], [rows, e]);
          // Float32 input already rounded the offset rows: the reference normalises exactly those float32 values.
          check(`${name} layer-norm [${rows}, ${e}] offset ${offset}`, got, {
            shape: [rows, e],
            data: layerNorm64(f64(x), e, 1e-5, w && f64(w), b && f64(b)),
          });
        },
      );
    });

    it("gelu: both forms over values up to ±12", async () => {
      await forAll(
        [fc.integer({ min: 1, max: 64 }), fc.constantFrom("none", "tanh"), fc.nat()],
        async (ex, n, approximate, seed) => {
          const x = Tensor.from(normals(seed, n, 4), [n]);
          check(`${name} gelu ${approximate} [${n}]`, await dispatch(ex, "gelu", { approximate }, [x], [n]), {
            shape: [n],
            data: gelu64(f64(x), approximate),
          });
        },
      );
    });

    it("add: random broadcastable shapes (dropped leading axes, axes of 1 on either side)", async () => {
      const shapes = fc
        .array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 4 })
        .chain((out) =>
          fc.tuple(
            fc.constant(out),
            fc.array(fc.boolean(), { minLength: out.length, maxLength: out.length }),
            fc.array(fc.boolean(), { minLength: out.length, maxLength: out.length }),
            fc.nat(out.length),
            fc.nat(out.length),
          ),
        );
      await forAll([shapes, fc.nat()], async (ex, [out, onesA, onesB, dropA, dropB], seed) => {
        // a keeps every axis (so the broadcast is `out` up to its axes of 1); b may drop leading ones
        const as = out.map((d, i) => (onesA[i] && !onesB[i] ? 1 : d));
        const bs = out.map((d, i) => (onesB[i] ? 1 : d)).slice(Math.min(dropB, out.length - 1));
        const a = Tensor.from(normals(seed, size(as)), as.slice(Math.min(dropA, 0)));
        const b = Tensor.from(normals(seed + 1, size(bs)), bs);
        const want = add64(f64(a), a.shape, f64(b), b.shape);
        check(`${name} add [${a.shape}] + [${b.shape}]`, await dispatch(ex, "add", {}, [a, b], want.shape), want);
      });
    });

    it("embedding: any ids in range pick exactly their rows", async () => {
      await forAll(
        [
          fc.integer({ min: 1, max: 20 }),
          fc.integer({ min: 1, max: 16 }),
          fc.integer({ min: 1, max: 3 }),
          fc.integer({ min: 1, max: 6 }),
          fc.nat(),
        ],
        async (ex, v, e, bsz, t, seed) => {
          const ids = seededIds(seed, [bsz, t], v);
          const table = Tensor.from(normals(seed, v * e), [v, e]);
          check(
            `${name} embedding V=${v} E=${e}`,
            await dispatch(ex, "embedding", {}, [ids, table], [bsz, t, e]),
            { shape: [bsz, t, e], data: embedding64(ids.toInt32Array(), f64(table), v, e) },
            true,
          );
        },
      );
    });

    it("cross-entropy: logits up to ±50, ignored targets, every reduction", async () => {
      await forAll(
        [
          fc.integer({ min: 1, max: 8 }),
          fc.integer({ min: 1, max: 20 }),
          fc.constantFrom(1, 10, 50),
          fc.constantFrom("mean", "sum", "none"),
          fc.boolean(),
          fc.nat(),
        ],
        async (ex, n, v, scale, reduction, ignore, seed) => {
          const targets = seededIds(seed, [n], v, ignore);
          const logits = Tensor.from(normals(seed, n * v, scale), [n, v]);
          const shape = reduction === "none" ? [n] : [];
          const want = crossEntropy64(f64(logits), v, targets.toInt32Array(), reduction, -100);
          const got = await dispatch(ex, "cross-entropy", { ignoreIndex: -100, reduction }, [logits, targets], shape);
          check(`${name} cross-entropy N=${n} V=${v} x${scale} ${reduction}`, got, { shape, data: want });
        },
      );
    });

    it("mask: a user mask of any rank with broadcast axes, a bias with −∞, composed with causal, window and padding", async () => {
      const dims = fc.tuple(
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 0, max: 5 }),
      );
      await forAll(
        [
          dims,
          fc.integer({ min: 2, max: 4 }),
          fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
          fc.boolean(),
          fc.boolean(),
          fc.option(fc.integer({ min: 1, max: 3 })),
          fc.boolean(),
          fc.nat(),
        ],
        async (ex, [B, H, L, S], rank, ones, withBias, causal, window, padded, seed) => {
          const u = mulberry32(seed);
          const axes = rank === 2 ? [2, 3] : rank === 3 ? [0, 2, 3] : [0, 1, 2, 3];
          const full = [B, H, L, S];
          const mShape = axes.map((a, i) => (ones[i] ? 1 : full[a]!));
          const user = Tensor.from(
            Array.from({ length: size(mShape) }, () => (u() < 0.25 ? 0 : 1)),
            mShape,
          );
          const bias = withBias
            ? Tensor.from(
                Array.from({ length: size(mShape) }, () => (u() < 0.1 ? -Infinity : u() * 2 - 1)),
                mShape,
              )
            : undefined;
          const pad = padded
            ? Tensor.from(
                Array.from({ length: B * S }, () => (u() < 0.3 ? 1 : 0)),
                [B, S],
              )
            : undefined;
          const scores = Tensor.from(normals(seed, B * H * L * S, 3), full);
          const attrs = {
            causal: causal || window !== null,
            window,
            alignment: u() < 0.5 ? "top-left" : "bottom-right",
            scale: withBias ? 0.5 : 1,
          } as const;
          const got = await dispatch(ex, "mask", attrs, [scores, pad, user, bias], full);
          const want = maskFull64(
            f64(scores),
            B,
            H,
            L,
            S,
            attrs,
            pad && f64(pad),
            { shape: mShape, data: f64(user) },
            bias && { shape: mShape, data: f64(bias) },
          );
          check(
            `${name} mask [${full}] user [${mShape}]${withBias ? " + bias" : ""}`,
            got,
            { shape: full, data: want },
            !withBias,
          );
        },
      );
    });
  },
);
