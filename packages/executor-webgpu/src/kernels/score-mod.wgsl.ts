// score-mod and mask-mod on webgpu: one invocation per element of [B, H, L, S], the expression as generated WGSL
// (expr.wgsl.ts), one pipeline per expression (its JSON is the cache key). Every gathered read is proved in range on
// the host for the call's sizes (unprovedReads); a read that cannot be proved (an index gathered from a tensor, one a
// `where` guards) is checked on the host before dispatch by evaluating the expression there (compileExpr): the same
// ExprIndexError as cpu, and the GPU never reads out of range (its reads also clamp). score-mod-input-grad scatters
// into the gathered input's gradient, which WGSL can only do with atomics on u32 (order-dependent rounding): it runs on
// the host over read-back values, deterministic and identical to cpu.
import {
  checkExprCached,
  gatheredOfCall,
  compileExpr,
  exprRows,
  inputGradRows,
  inputsRead,
  unprovedReads,
  type Expr,
  type ScoreModAttrs,
  type ScoreModInputGradAttrs,
} from "@attngraph/graph";
import { UnsupportedError } from "@attngraph/tensor";
import type { KernelContext, WebGpuKernel } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { ProgramInfo } from "../program.js";
import { elementwiseParams, elementwiseProgram } from "./elementwise.wgsl.js";
import { attrsOf, input, optionalInput } from "./inputs.js";
import { writeOutput } from "./output.js";
import { exprWgsl } from "./expr.wgsl.js";
import { hostGathered } from "./expr-host.js";
import { PARAM_WORDS, storageBindings } from "./shared.wgsl.js";

type Call = Parameters<WebGpuKernel>[0];

function gatheredOf(call: Call, first: number): Map<string, GpuTensor> {
  return gatheredOfCall(call, first, (slot) => optionalInput(call, slot));
}

function exprAttr(call: Call, role: "score" | "mask", gathered: ReadonlyMap<string, GpuTensor>): Expr {
  return checkExprCached(call.attrs["expr"], {
    subject: `${call.node}.expr`,
    role,
    inputs: new Map([...gathered].map(([n, t]) => [n, t.rank])),
  });
}

/**
 * Runs the expression on the host over every element when a read cannot be proved in range, so that an out-of-range
 * read is the ExprIndexError cpu gives (a read that depends on the score needs x's values too).
 */
async function checkUnproved(
  call: Call,
  gpu: KernelContext,
  expr: Expr,
  x: GpuTensor,
  gathered: ReadonlyMap<string, GpuTensor>,
  role: "score" | "mask",
  scale: number,
): Promise<void> {
  const [B, H, L, S] = x.shape as [number, number, number, number];
  const shapes = new Map([...gathered].map(([n, t]) => [n, t.shape]));
  if (unprovedReads(expr, { B, H, L, S }, shapes).length === 0) return;
  const host = (await gpu.hostValues(x)).contiguous();
  const f = compileExpr(expr, await hostGathered(gpu, gathered), `${call.node}.expr`);
  exprRows(
    { data: host.toFloat32Array(), shape: host.shape, strides: host.strides, offset: 0 },
    f,
    scale,
    role === "mask",
    new Float32Array(host.size),
    0,
    0,
    B * H * L,
  );
}

function program(
  call: Call,
  role: "score" | "mask",
  expr: Expr,
  x: GpuTensor,
  gathered: ReadonlyMap<string, GpuTensor>,
  scale: number,
  out: GpuTensor,
): ProgramInfo {
  const [, H, L, S] = x.shape as [number, number, number, number];
  const p = elementwiseParams(out.size);
  const xv = p.view(x);
  const dims = p.u32(H);
  p.u32(L);
  p.u32(S);
  const sc = p.f32(scale);
  // Only what the expression reads is bound: the pipeline's automatic layout drops a binding the code never uses.
  const read = inputsRead(expr);
  const names = [...gathered.keys()].filter((name) => read.has(name));
  const views = names.map((name) => p.view(gathered.get(name)!));
  const bindings = names.map((_, i) => `G${i}`);
  const key = JSON.stringify({ role, expr, inputs: names });
  return elementwiseProgram({
    name: call.kind,
    cacheKey: `${call.kind}:${key}`,
    params: p,
    helpers: () =>
      `\n${exprWgsl(
        expr,
        "modification",
        names.map((name, i) => ({ name, binding: bindings[i]!, view: views[i]! })),
      )}`,
    bindings: storageBindings(["X", ...bindings]),
    body: /* wgsl */ `  let nh = pu(${dims}u);
  let nl = pu(${dims + 1}u);
  let ns = pu(${dims + 2}u);
  let kv = i % ns;
  let row = i / ns;
  let q = row % nl;
  let h = (row / nl) % nh;
  let b = row / (nl * nh);
  let x = X[view_at(${xv}u, i)];
  ${
    role === "mask"
      ? `if (modification(0.0, f32(b), f32(h), f32(q), f32(kv))) { Y[i] = x; } else { Y[i] = neg_inf(); }`
      : `Y[i] = modification(pf(${sc}u) * x, f32(b), f32(h), f32(q), f32(kv));`
  }`,
    inputs: [x, ...names.map((name) => gathered.get(name)!)],
    output: out,
  });
}

function exprKernel(role: "score" | "mask"): WebGpuKernel {
  return async (call, gpu) => {
    const x = input(call, 0);
    const gathered = gatheredOf(call, 1);
    const expr = exprAttr(call, role, gathered);
    const scale = role === "score" ? attrsOf<ScoreModAttrs>(call).scale : 1;
    // X, the gathered inputs and Y: each a storage binding, of which a device may have as few as 8 per shader.
    const limit = gpu.device.limits.maxStorageBuffersPerShaderStage;
    const bound = inputsRead(expr).size;
    if (bound + 2 > limit) {
      throw new UnsupportedError(
        `${call.kind} reading ${bound} gathered inputs on webgpu: this device binds at most ${limit} storage buffers per shader (${limit - 2} gathered inputs)`,
        { subject: call.node },
      );
    }
    // The params uniform holds x's view, five numbers and each bound input's view (2 + 2 · rank words).
    const read = inputsRead(expr);
    const words = 10 + 5 + [...gathered].filter(([n]) => read.has(n)).reduce((a, [, t]) => a + 2 + 2 * t.rank, 0);
    if (words > PARAM_WORDS) {
      throw new UnsupportedError(
        `${call.kind} on webgpu: its gathered inputs' views need ${words} words of params, more than the ${PARAM_WORDS} a program has (fewer or lower-rank gathered inputs)`,
        { subject: call.node },
      );
    }
    await checkUnproved(call, gpu, expr, x, gathered, role, scale);
    return writeOutput(call, gpu, (out) => program(call, role, expr, x, gathered, scale, out));
  };
}

/** Inputs: x [B, H, L, S], gathered g0 …; attrs { scale, expr, inputs } → [B, H, L, S]. */
export const scoreModKernel = exprKernel("score");

/** Inputs: x [B, H, L, S], gathered g0 …; attrs { expr, inputs } → [B, H, L, S], −∞ where expr is false. */
export const maskModKernel = exprKernel("mask");

/** Inputs: x, grad [B, H, L, S], gathered g0 …; attrs { scale, expr, inputs, wrt } → the shape of gathered `wrt`. */
export const scoreModInputGradKernel: WebGpuKernel = async (call, gpu) => {
  const x = input(call, 0);
  const grad = input(call, 1);
  const gathered = gatheredOf(call, 2);
  const { wrt, scale } = attrsOf<ScoreModInputGradAttrs>(call);
  // The declaration's rule made wrt one of the gathered inputs' names.
  const target = gathered.get(wrt)!;
  const expr = exprAttr(call, "score", gathered);
  const [hx, hg] = [(await gpu.hostValues(x)).contiguous(), (await gpu.hostValues(grad)).contiguous()];
  const view = (t: typeof hx) => ({ data: t.toFloat32Array(), shape: t.shape, strides: t.strides, offset: 0 });
  const sums = new Float64Array(target.size);
  const [B, H, L] = x.shape as [number, number, number, number];
  inputGradRows(expr, wrt, await hostGathered(gpu, gathered), `${call.node}.expr`)(
    view(hx),
    view(hg),
    scale,
    sums,
    0,
    B * H * L,
  );
  const out = gpu.alloc(target.shape);
  if (out.size > 0) gpu.device.queue.writeBuffer(out.storage.buffer, 0, Float32Array.from(sums));
  return out;
};
