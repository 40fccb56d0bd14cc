// User ops as tests declare them: one input x and an output of x's shape, with no kernel on any executor until a test
// registers one. The tests that need a user op (a node no executor supports, an op without a backward rule, one with
// no ONNX form, a kernel planted between score and mask) take these instead of each declaring its own.
import { defineOp, type AttrSpec, type OpDef, type VjpRule } from "@attngraph/graph";

/** What a test may add to an elementwise user op: its attributes and a backward rule. */
export interface UserOpExtras<A extends object> {
  readonly attrs?: OpDef<A>["attrs"];
  readonly vjp?: VjpRule<A>;
}

/** An elementwise user op `kind` on one input x; no attributes unless given. */
export function elementwiseUserOp<A extends object = Record<string, never>>(
  kind: string,
  doc: string,
  extras: UserOpExtras<A> = {},
): OpDef<A> {
  const attrs = extras.attrs ?? ({} as OpDef<A>["attrs"]);
  const def: OpDef<A> = { kind, doc, inputs: [{ name: "x" }], attrs, inferShape: ([x]) => x! };
  return defineOp<A>(extras.vjp ? { ...def, vjp: extras.vjp } : def);
}

export interface SoftcapAttrs {
  readonly cap: number;
}

/**
 * Logit soft-capping (Gemma 2), cap · tanh(x / cap), as a user op `softcap` with a cap ≥ 0 that defaults to
 * `capDefault` where one is given (else a node must set it). Not graph's `softCap` score modification: this is an op
 * of its own, which no executor knows.
 */
export function softcapOp(capDefault?: number, vjp?: VjpRule<SoftcapAttrs>): OpDef<SoftcapAttrs> {
  const cap: AttrSpec =
    capDefault === undefined ? { type: "number", min: 0 } : { type: "number", min: 0, default: capDefault };
  return elementwiseUserOp<SoftcapAttrs>(
    "softcap",
    "cap · tanh(x / cap)",
    vjp ? { attrs: { cap }, vjp } : { attrs: { cap } },
  );
}
