// The gathered inputs of an expression kernel (score-mod, mask-mod, score-mod-input-grad, the fused attention with
// modifications): slots from `first` on, named by the `inputs` attribute, as the views compileExpr reads.
import { checkExpr, type Expr, type GatheredTensor } from "@attngraph/graph";
import { attrError, optionalInput, type Call } from "./adapter.js";

/** Name → tensor for the `inputs` attribute's names, read from slots first, first + 1, …; a missing one is an error. */
export function gatheredOf(call: Call, first: number): Map<string, GatheredTensor> {
  const names = call.attrs["inputs"] ?? [];
  if (!Array.isArray(names) || !names.every((n) => typeof n === "string")) throw attrError(call, "inputs", "a list of names", String(names));
  const out = new Map<string, GatheredTensor>();
  names.forEach((name: string, i) => {
    const t = optionalInput(call, first + i, `g${i}`);
    if (t === undefined) throw attrError(call, "inputs", `a tensor in slot g${i} for ${name}`, "nothing");
    out.set(name, t);
  });
  return out;
}

/** Checked expressions by the attribute object they came from (a plan step keeps one): checked once per rank set. */
const checked = new WeakMap<object, { readonly key: string; readonly expr: Expr }>();

/**
 * The call's expression attribute `field`, checked against its gathered inputs (a kernel may be dispatched by hand,
 * with any attributes): the same typed error the graph gives, naming `<node>.<field>` and the sub-expression.
 */
export function exprOf(call: Call, field: string, role: "score" | "mask", gathered: ReadonlyMap<string, GatheredTensor>): Expr {
  const raw: unknown = call.attrs[field];
  const key = [...gathered].map(([n, t]) => `${n}:${t.shape.length}`).join(",");
  const hit = typeof raw === "object" && raw !== null ? checked.get(raw) : undefined;
  if (hit && hit.key === key) return hit.expr;
  const { expr } = checkExpr(raw, { subject: `${call.node}.${field}`, role, inputs: new Map([...gathered].map(([n, t]) => [n, t.shape.length])) });
  if (typeof raw === "object" && raw !== null) checked.set(raw, { key, expr });
  return expr;
}
