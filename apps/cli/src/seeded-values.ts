// Seeded random values for a graph document's declarations: `attngraph diff` feeds its inputs and weights with them,
// `attngraph export` uses them as weights when no --weights file is named. Its symbolic dims are sized by
// `--dims B=2,T=8`; every size is checked before anything is allocated.
import type { ValueDecl } from "@attngraph/graph";
import { ShapeError, Tensor, clip, type AnyTensor } from "@attngraph/tensor";
import { UsageError } from "./io.js";

/**
 * The runtime's default memory limit (compile's maxArenaBytes). Values past it would be refused by the first run
 * anyway, after minutes of drawing random numbers, or would crash making a typed array past the engine's limit.
 */
const MAX_BYTES = 4 * 1024 ** 3;

/** Values drawn uniformly from [-1, 1) by `next` for `decls`, in their order. */
export function seededValues(
  file: string,
  decls: readonly ValueDecl[],
  dims: ReadonlyMap<string, number>,
  next: () => number,
): Record<string, AnyTensor> {
  const shaped = decls.map((d) => ({ name: d.name, shape: shapeOf(file, d, dims) }));
  const sizes = shaped.map(({ shape }) => shape.reduce((a, b) => a * b, 1));
  const bytes = 4 * sizes.reduce((a, b) => a + b, 0);
  if (bytes > MAX_BYTES) {
    const largest = shaped[sizes.indexOf(Math.max(...sizes))]!;
    const hint = decls.some((d) => d.shape.some((s) => typeof s === "string")) ? "; give smaller --dims" : "";
    throw new ShapeError(
      `${clip(file)}: ${clip(largest.name)} [${largest.shape.join(", ")}]`,
      "too large to fill with random values",
      `at most 4 GiB of float32 values in all (the runtime's memory limit${hint})`,
      `${(bytes / 1024 ** 3).toFixed(1)} GiB`,
    );
  }
  return Object.fromEntries(
    shaped.map(({ name, shape }, i) => [
      name,
      new Tensor(
        Float32Array.from({ length: sizes[i]! }, () => next() * 2 - 1),
        shape,
      ),
    ]),
  );
}

function shapeOf(file: string, d: ValueDecl, dims: ReadonlyMap<string, number>): number[] {
  if (d.dtype === "int32")
    throw new UsageError(
      `${clip(file)}: input ${clip(d.name)} is int32 (token ids or targets): random values would not be valid ones; diff a golden case instead`,
    );
  return d.shape.map((s) => {
    if (typeof s === "number") return s;
    const v = dims.get(s);
    if (v === undefined)
      throw new UsageError(
        `${clip(file)}: ${clip(d.name)} has the symbolic dim ${clip(s)}: give its size with --dims ${clip(s)}=<n>`,
      );
    return v;
  });
}

/** `--dims B=2,T=8` as a map from dim name to size. */
export function parseDims(text: string | undefined): Map<string, number> {
  const dims = new Map<string, number>();
  if (!text) return dims;
  for (const part of text.split(",")) {
    const m = /^\s*([^=\s]+)\s*=\s*(\d+)\s*$/.exec(part);
    if (!m || !(Number(m[2]) >= 1 && Number.isSafeInteger(Number(m[2]))))
      throw new UsageError(`--dims: expected name=size pairs like B=2,T=8 (sizes >= 1), got "${clip(part)}"`);
    if (dims.has(m[1]!)) throw new UsageError(`--dims: ${clip(m[1]!)} is given twice`);
    dims.set(m[1]!, Number(m[2]));
  }
  return dims;
}

/** A UsageError for a `--dims` name that no declaration in `decls` uses: it would size nothing. `note` says why. */
export function checkDimsUsed(
  file: string,
  dims: ReadonlyMap<string, number>,
  decls: readonly ValueDecl[],
  noun: string,
  note?: string,
): void {
  const used = new Set(decls.flatMap((d) => d.shape.filter((s): s is string => typeof s === "string")));
  for (const name of dims.keys()) {
    if (used.has(name)) continue;
    throw new UsageError(
      `--dims ${clip(name)}: no ${noun} of ${clip(file)} has this symbolic dim (theirs: ${used.size ? clip([...used].join(", ")) : "none"}${note ? `; ${note}` : ""})`,
    );
  }
}
