// add: a + b with NumPy broadcasting, any strides on both. The host lays both inputs over the output shape (strides 0
// where one stretches: broadcastStrides), merges the axes that stay mergeable for both, and hands the module [rows, n]
// blocks (assembly/add.ts: 4 lanes where a row is contiguous or one splatted value). [B, T, E] + [1, T, E] merges to
// [B, T·E] and [B, T, E] + [E] to [B·T, E]: one module call each. With a signal, a big call runs in chunks of rows.
import { broadcastStrides } from "@attngraph/graph";
import { chunkedKernel, overRows } from "../chunks.js";
import type { WasmValue } from "../value.js";
import type { WasmContext } from "../context.js";
import { fillingChunked, requireInput, type Call } from "./adapter.js";
import { writeIntFields } from "./params-block.js";

/** One axis of the merged layout: its length and the element strides of a and b along it. */
export interface Axis {
  n: number;
  sa: number;
  sb: number;
}

/**
 * The output's axes with a's and b's strides, size-1 axes dropped and neighbours merged where both inputs allow it
 * (the outer stride is the inner stride times the inner length for a and for b; stride 0 merges with stride 0).
 */
export function mergeAxes(shape: readonly number[], sa: readonly number[], sb: readonly number[]): Axis[] {
  const axes: Axis[] = [];
  shape.forEach((n, i) => {
    if (n === 1) return;
    const last = axes.at(-1);
    if (last !== undefined && last.sa === sa[i]! * n && last.sb === sb[i]! * n) {
      last.n *= n;
      last.sa = sa[i]!;
      last.sb = sb[i]!;
    } else axes.push({ n, sa: sa[i]!, sb: sb[i]! });
  });
  return axes;
}

/** Inputs: a [...], b [...] broadcastable with a → the broadcast shape (`call.outShape`, by the shape rule). */
export const addKernel = chunkedKernel((call, ctx) => broadcastPair(call, ctx, "add"));

/**
 * a ∘ b (inputs a and b) into a new outShape (their broadcast shape, as the shape rule of add and mul says) by the
 * module's `op` (add or mul, the same PairParams blocks), in chunks of rows with a signal.
 */
export function broadcastPair(call: Call, ctx: WasmContext, op: "add" | "mul"): WasmValue | Promise<WasmValue> {
  const a = requireInput(call, 0, "a");
  const b = requireInput(call, 1, "b");
  const shape = call.outShape;
  const out = ctx.output(call, shape);
  return fillingChunked(call, ctx, out, () => {
    if (out.size === 0) return undefined;
    const axes = mergeAxes(
      shape,
      broadcastStrides(a.shape, a.strides, shape),
      broadcastStrides(b.shape, b.strides, shape),
    );
    const n = axes.at(-1)?.n ?? 1;
    const part = addBlocks(a, b, axes, (pa, ars, acs, pb, brs, bcs, r, rows) =>
      ctx.exports[op](
        writeIntFields(ctx, ctx.params, PAIR_FIELDS, [pa, ars, acs, pb, brs, bcs, out.address + r * n * 4, rows, n]),
      ),
    );
    return overRows(call, ctx, out.size / n, n * ADD_WORK, part);
  });
}

/**
 * A block of rows r, r + 1, …, r + rows − 1 (flat row indices) of a + b, each n long: a's row i starts at byte address
 * pa + i·ars·4 and steps acs elements, b's likewise; strides in elements, 0 where an input stretches.
 */
export type AddBlock = (
  pa: number,
  ars: number,
  acs: number,
  pb: number,
  brs: number,
  bcs: number,
  r: number,
  rows: number,
  n: number,
) => void;

/**
 * a + b laid over `axes` (mergeAxes) as blocks for the module: the last axis is its row, the one before it its rows, any
 * further axes are walked here. `part(r0, r1)` hands rows [r0, r1) of the flat [outer…, mid] rows to `block`, one call
 * per outer index they meet (add writes them dense; add-layer-norm into its [sum | norm] rows).
 */
export function addBlocks(
  a: WasmValue,
  b: WasmValue,
  axes: readonly Axis[],
  block: AddBlock,
): (r0: number, r1: number) => void {
  const inner = axes.at(-1) ?? { n: 1, sa: 0, sb: 0 };
  const mid = axes.length >= 2 ? axes[axes.length - 2]! : { n: 1, sa: 0, sb: 0 };
  const outer = axes.slice(0, -2);
  return (r0, r1) => {
    for (let r = r0; r < r1; ) {
      const o = Math.floor(r / mid.n);
      const i0 = r - o * mid.n;
      const i1 = Math.min(mid.n, i0 + (r1 - r));
      let offA = a.offset + i0 * mid.sa;
      let offB = b.offset + i0 * mid.sb;
      for (let d = outer.length - 1, rest = o; d >= 0; d--) {
        const k = rest % outer[d]!.n;
        rest = (rest - k) / outer[d]!.n;
        offA += k * outer[d]!.sa;
        offB += k * outer[d]!.sb;
      }
      block(a.block.ptr + offA * 4, mid.sa, inner.sa, b.block.ptr + offB * 4, mid.sb, inner.sb, r, i1 - i0, inner.n);
      r += i1 - i0;
    }
  };
}

/** Work per element in multiply-adds of the SIMD matmul: two loads, an add and a store (measured ≈ 2.4, Node 20). */
export const ADD_WORK = 3;

/** PairParams' fields in the module's order (assembly/add.ts; 4 bytes each, integers): add's, mul's and addLayerNorm's block. */
export const PAIR_FIELDS = ["a", "ars", "acs", "b", "brs", "bcs", "dst", "rows", "n"] as const;
