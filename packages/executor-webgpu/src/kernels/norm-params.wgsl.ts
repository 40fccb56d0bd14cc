// An optional [E] vector of the norms (weight, bias) as params: three words, (present, offset, stride), so that one
// pipeline serves a call with and without it and any stride of it.
import type { GpuTensor } from "../gpu-tensor.js";
import type { Params } from "./shared.wgsl.js";

/** Packs (present, offset, stride) of `t` (zeros when absent) and returns the first word's position. */
export function packOptionalVector(p: Params, t: GpuTensor | undefined): number {
  const at = p.u32(t ? 1 : 0);
  p.u32(t ? t.offset : 0);
  p.u32(t ? t.strides[0]! : 0);
  return at;
}

/** WGSL: `has<V>`, `<v>o` and `<v>s` (present, offset, stride) of the vector `v` packed at word `at`. */
export function optionalVectorWgsl(v: string, at: number): string {
  return `let has${v.toUpperCase()} = pu(${at}u) != 0u; let ${v}o = pu(${at + 1}u); let ${v}s = pu(${at + 2}u);`;
}

/** Where packRow put a row norm's x: its view's word and the rows' word (E, x's last stride and eps follow it). */
export interface RowWords {
  readonly view: number;
  readonly at: number;
  /** The row count, for the grid. */
  readonly rows: number;
}

/** Params of a row norm's x [..., E]: x's view, then rows, E, x's last stride and eps (f32). One layout for every norm. */
export function packRow(p: Params, x: GpuTensor, eps: number): RowWords {
  const ne = x.shape[x.rank - 1]!;
  const rows = x.size / ne;
  const view = p.view(x);
  const at = p.u32(rows);
  p.u32(ne);
  p.u32(x.strides[x.rank - 1]!);
  p.f32(eps);
  return { view, at, rows };
}

/** WGSL: `ne`, `xs` (x's last stride) and `xb` (the buffer index of the row's first element) of `row`, from packRow. */
export function rowWgsl(w: RowWords): string {
  return `let ne = pu(${w.at + 1}u); let xs = pu(${w.at + 2}u);
  let xb = view_at(${w.view}u, row * ne);`;
}

/** WGSL: the eps packRow wrote, as an f32 expression. */
export function rowEpsWgsl(w: RowWords): string {
  return `pf(${w.at + 3}u)`;
}
