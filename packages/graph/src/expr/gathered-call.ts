// The gathered inputs of an expression kernel's call, by name: slots from `first` on, named by the `inputs` attribute.
// One rule for every executor (each reads its own kind of value through `get`, which reports a slot of the wrong kind).
import { attrError, expectDim, expectRank, type CallInfo, type Shaped } from "../kernel-checks.js";

export function gatheredOfCall<T>(
  call: CallInfo,
  first: number,
  get: (slot: number, name: string) => T | undefined,
): Map<string, T> {
  const names = call.attrs["inputs"] ?? [];
  if (!Array.isArray(names) || !names.every((n) => typeof n === "string"))
    throw attrError(call, "inputs", "a list of names", names);
  const out = new Map<string, T>();
  names.forEach((name: string, i) => {
    const t = get(first + i, `g${i}`);
    if (t === undefined) throw attrError(call, "inputs", `a tensor in slot g${i} for ${name}`, "nothing");
    out.set(name, t);
  });
  return out;
}

/**
 * The checks of a score-mod-input-grad call, one rule for every executor: x [B, H, L, S], grad of x's shape, and
 * `wrt` naming one of the gathered inputs; returns that input (whose shape the gradient has) and its name.
 */
export function inputGradTarget<T extends Shaped>(
  call: CallInfo,
  x: Shaped,
  grad: Shaped,
  gathered: ReadonlyMap<string, T>,
): { readonly wrt: string; readonly target: T } {
  expectRank(call, "x", x, 4, "[B, H, L, S]");
  x.shape.forEach((d, i) =>
    expectDim(call, "grad", `dim ${i} of the gradient must match the scores`, d, grad.shape[i]!, grad),
  );
  const wrt = call.attrs["wrt"];
  const target = typeof wrt === "string" ? gathered.get(wrt) : undefined;
  if (target === undefined)
    throw attrError(call, "wrt", `one of the gathered inputs (${[...gathered.keys()].join(", ")})`, wrt);
  return { wrt: wrt as string, target };
}
