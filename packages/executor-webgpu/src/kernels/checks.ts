// What every kernel entry checks before encoding anything, each error naming `<node>.<field>`: a call may come from a
// user dispatching by hand, not only from a validated graph. The same codes and wording as the CPU executor.
import { AttnGraphError, ShapeError, describe, formatShape } from "@attngraph/tensor";
import type { KernelCall } from "@attngraph/graph";
import { GpuTensor } from "../gpu-tensor.js";

export type Call = KernelCall<GpuTensor>;

export function requireInput(call: Call, slot: number, name: string): GpuTensor {
  const v = optionalInput(call, slot, name);
  if (v === undefined) {
    const subject = `${call.node}.${name}`;
    throw new AttnGraphError("input", describe(subject, `missing required input ${slot} (${name}) of op ${call.kind}`, "a tensor", "undefined"), {
      subject,
      expected: "a tensor",
      got: "undefined",
    });
  }
  return v;
}

export function optionalInput(call: Call, slot: number, name: string): GpuTensor | undefined {
  const v: unknown = call.inputs[slot];
  if (v === undefined || v === null) return undefined;
  if (!(v instanceof GpuTensor)) {
    const subject = `${call.node}.${name}`;
    const got = typeof v === "object" ? "an object that is not a webgpu value (upload it first)" : typeof v;
    throw new AttnGraphError("input", describe(subject, `input ${slot} (${name}) of op ${call.kind} is not a webgpu value`, "a GpuTensor", got), {
      subject,
      expected: "a GpuTensor",
      got,
    });
  }
  return v;
}

export function expectRank(call: Call, name: string, t: GpuTensor, rank: number, legend: string): void {
  if (t.rank !== rank) throw new ShapeError(`${call.node}.${name}`, `op ${call.kind} needs rank ${rank}`, legend, formatShape(t.shape));
}

export function expectDim(call: Call, name: string, what: string, expected: number, got: number, t: GpuTensor): void {
  if (expected !== got) throw new ShapeError(`${call.node}.${name}`, what, String(expected), `${got} in ${formatShape(t.shape)}`);
}

export function expectHeadGroups(call: Call, name: string, h: number, hkv: number, t: GpuTensor): void {
  if (hkv === 0 ? h !== 0 : h % hkv !== 0) {
    throw new ShapeError(`${call.node}.${name}`, "query heads H must be a multiple of key/value heads Hkv", `a divisor of H=${h}`, `Hkv=${hkv} in ${formatShape(t.shape)}`);
  }
}

export function attrError(call: Call, field: string, expected: string, value: unknown): AttnGraphError {
  const subject = `${call.node}.${field}`;
  let got: string;
  try {
    got = typeof value === "string" ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  } catch {
    got = String(value);
  }
  return new AttnGraphError("attr", describe(subject, `invalid attribute of op ${call.kind}`, expected, got), { subject, expected, got });
}

export function checkScale(call: Call, field = "scale"): number {
  const scale = call.attrs[field];
  if (typeof scale !== "number" || !Number.isFinite(scale)) throw attrError(call, field, "a finite number", scale);
  return scale;
}
