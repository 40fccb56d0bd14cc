// The program of the row kernels (softmax, the norms, cross-entropy and their gradients): one workgroup of WG threads
// per row, the row index taken from a 2-D grid so that more than 65535 rows fit, the row's reductions by REDUCE_WGSL.
// Written once here so that a kernel file holds only its params and the statements for one row.
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { PRELUDE, type Params, WG } from "./shared.wgsl.js";
import { REDUCE_WGSL } from "./reduce.wgsl.js";

/** Workgroups for one per row: a 2-D grid past 65535 rows (the row is `wg.y * nw.x + wg.x`). */
export function rowGrid(rows: number): [number, number, number] {
  const gx = Math.min(rows, 65535);
  return [gx, gx === 0 ? 0 : Math.ceil(rows / gx), 1];
}

/**
 * WGSL: the entry point running `body` for the workgroup's row (`index`, by default `row`) when it is < pu(count),
 * with `t` the thread's index in the workgroup.
 */
export function rowMain(count: number, body: string, index = "row"): string {
  return /* wgsl */ `@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nw: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let ${index} = wg.y * nw.x + wg.x;
  if (${index} >= pu(${count}u)) { return; }
  let t = lid.x;
${body}
}`;
}

export interface RowProgram {
  /** For labels and errors; also the cacheKey unless one is given. */
  readonly name: string;
  readonly cacheKey?: string;
  readonly params: Params;
  /** Params word of the row count. */
  readonly count: number;
  /** Rows to dispatch. */
  readonly rows: number;
  /** Module-scope WGSL the body needs besides the prelude and the reductions (functions, private variables). */
  readonly helpers?: string;
  readonly bindings: string;
  readonly index?: string;
  /** WGSL statements for one row, its index in range. */
  readonly body: string;
  readonly inputs: ProgramInfo["inputs"];
  readonly output: GpuTensor;
}

export function rowProgram(r: RowProgram): ProgramInfo {
  return {
    name: r.name,
    cacheKey: r.cacheKey ?? r.name,
    code: () => `${PRELUDE}${REDUCE_WGSL}${r.helpers ?? ""}\n${r.bindings}\n${rowMain(r.count, r.body, r.index)}`,
    params: r.params,
    inputs: r.inputs,
    output: r.output,
    workgroups: rowGrid(r.rows),
  };
}
