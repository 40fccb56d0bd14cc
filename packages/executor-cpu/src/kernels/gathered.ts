// The gathered inputs of an expression kernel (score-mod, mask-mod, score-mod-input-grad, the fused attention with
// modifications): slots from `first` on, named by the `inputs` attribute, as the views compileExpr reads.
import { checkExprCached, gatheredOfCall, type Expr, type GatheredTensor } from "@attngraph/graph";
import { optionalInput, type Call } from "./adapter.js";

/** Name → tensor for the `inputs` attribute's names, read from slots first, first + 1, …; a missing one is an error. */
export function gatheredOf(call: Call, first: number): Map<string, GatheredTensor> {
  return gatheredOfCall(call, first, (slot, name) => optionalInput(call, slot, name));
}

/**
 * The call's expression attribute `field`, checked against its gathered inputs (a kernel may be dispatched by hand,
 * with any attributes): the same typed error the graph gives, naming `<node>.<field>` and the sub-expression.
 */
export function exprOf(
  call: Call,
  field: string,
  role: "score" | "mask",
  gathered: ReadonlyMap<string, GatheredTensor>,
): Expr {
  return checkExprCached(call.attrs[field], {
    subject: `${call.node}.${field}`,
    role,
    inputs: new Map([...gathered].map(([n, t]) => [n, t.shape.length])),
  });
}
