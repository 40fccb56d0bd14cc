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
