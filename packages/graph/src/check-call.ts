// A kernel call checked against its op's declaration, once, before any executor's kernel reads it: the declaration
// already says what a call must be (inputs present and of their dtype, attributes of their specs with their defaults,
// the shape rule), so no kernel restates it. Every executor's dispatch runs this; a kernel then reads its inputs'
// dims and its attributes knowing they fit. A call that does not fit fails naming `<node>.<field>`: an "input" error
// for a missing input or a wrong dtype, an "attr" error for an attribute, a ShapeError for shapes.
import { AttnGraphError, ShapeError, describe, formatShape, type DType, type Shape } from "@attngraph/tensor";
import { formatDims, type SymShape } from "./dims.js";
import type { KernelCall } from "./executor-contract.js";
import { inferShape, normalizeAttrs, type AnyOpDef, type AttrSpec, type OpContext } from "./op-def.js";
import { builtinOps } from "./ops/index.js";

/** What the check reads of an executor's value: its shape and, where it keeps one, its dtype. */
export interface CallValue {
  readonly shape: Shape;
  readonly dtype?: DType;
}

const BUILTIN: ReadonlyMap<string, AnyOpDef> = new Map(builtinOps.map((op) => [op.kind, op]));

/** The declaration of a built-in op kind; undefined for a user's kind (its kernel checks its own calls). */
export function builtinOpDef(kind: string): AnyOpDef | undefined {
  return BUILTIN.get(kind);
}

/**
 * What was learned of an attribute object: its normal form and the last call that passed with it. A plan keeps one
 * object per step, so each step's attributes are normalized once and its calls, run after run, checked once (a decode
 * step is ~20 small calls, where checking each again showed in its time). A Map bounded in size, not a WeakMap: a run
 * that binds dims makes fresh attribute objects every step, and a WeakMap entry per call cost more in garbage
 * collection than the check it saves. (Attribute objects are treated as immutable, as kernels caching by them do.)
 */
interface Known {
  readonly def: AnyOpDef;
  readonly attrs: Readonly<Record<string, unknown>>;
  passed?: Passed;
}
const known = new Map<object, Known>();
const KNOWN_MAX = 1024;
function remember(key: object, entry: Known): void {
  if (known.size >= KNOWN_MAX) known.clear();
  known.set(key, entry);
}

/**
 * `call` checked against `def` (by default the built-in declaration of `call.kind`; a kind without one is returned
 * as it is). Returns the call with its attributes normalized: defaults filled in, each checked. Throws before any
 * memory is touched when an input is missing or of the wrong dtype, an attribute is invalid, the inputs' shapes break
 * the op's shape rule, or `outShape` is not the shape the rule gives.
 */
export function checkCall<V extends CallValue | undefined>(
  call: KernelCall<V>,
  def: AnyOpDef | undefined = BUILTIN.get(call.kind),
): KernelCall<V> {
  if (def === undefined) return call;
  const entry = knownAttrs(def, call);
  const attrs = entry.attrs;
  // A plan's step calls again with the same attribute object and, run after run, the same shapes and dtypes: that
  // call passed already (a decode step is ~20 small calls, where checking each again showed in its time).
  const last = entry.passed;
  if (last !== undefined && sameValues(last, call)) return attrs === call.attrs ? call : { ...call, attrs };
  unboundDim(def, call, attrs);
  const shapes: (SymShape | undefined)[] = [];
  def.inputs.forEach((spec, slot) => {
    const v = call.inputs[slot];
    if (v === undefined || v === null) {
      if (!spec.optional)
        throw inputError(call, spec.name, `missing required input ${slot} (${spec.name})`, "a tensor", "undefined");
      shapes.push(undefined);
      return;
    }
    // View ops (reshape, transpose, slice) move elements, never read them as numbers: any dtype passes through.
    const want = spec.dtype ?? "float32";
    if (!def.view && v.dtype !== undefined && v.dtype !== want)
      throw inputError(call, spec.name, `input ${slot} (${spec.name})`, want, v.dtype, " has the wrong dtype");
    shapes.push(v.shape);
  });
  const out = inferShape(def, shapes, attrs, shapeContext(call, def));
  // A dim the rule leaves symbolic (a reshape to [B, T, …] by name) is one the runtime bound in outShape: any fits.
  if (out.length !== call.outShape.length || out.some((d, i) => typeof d === "number" && d !== call.outShape[i])) {
    throw new ShapeError(
      `${call.node}.outShape`,
      `the output shape of op ${call.kind} follows from its inputs`,
      formatDims(out),
      formatShape(call.outShape),
    );
  }
  entry.passed = {
    shapes: call.inputs.map((v) => (v == null ? undefined : [...v.shape])),
    dtypes: call.inputs.map((v) => v?.dtype),
    outShape: [...call.outShape],
  };
  return attrs === call.attrs ? call : { ...call, attrs };
}

/** The last call that passed with an attribute object (of the entry's op): what it was checked with. */
interface Passed {
  readonly shapes: readonly (readonly number[] | undefined)[];
  readonly dtypes: readonly (DType | undefined)[];
  readonly outShape: readonly number[];
}

/** Whether `call` has the inputs (present, shapes, dtypes) and outShape `p` passed with. */
function sameValues(p: Passed, call: KernelCall<CallValue | undefined>): boolean {
  const n = call.inputs.length;
  if (n !== p.shapes.length || !sameDims(p.outShape, call.outShape)) return false;
  for (let i = 0; i < n; i++) {
    const v = call.inputs[i];
    const shape = p.shapes[i];
    if (v === undefined || v === null) {
      if (shape !== undefined) return false;
    } else if (shape === undefined || v.dtype !== p.dtypes[i] || !sameDims(shape, v.shape)) return false;
  }
  return true;
}

function sameDims(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * A checked call's attributes as its op declares them (`A`, the op's attribute type): every declared one present,
 * defaults filled in, each within its spec and the op's rules, dims bound. What kernels read instead of restating.
 */
export function attrsOf<A extends object>(call: { readonly attrs: Readonly<Record<string, unknown>> }): A {
  return call.attrs as unknown as A;
}

/** What is known of the call's attribute object: its normal form (computed now if not), and the last call it passed. */
function knownAttrs(def: AnyOpDef, call: KernelCall<unknown>): Known {
  const hit = known.get(call.attrs);
  if (hit !== undefined && hit.def === def) return hit;
  const fresh = normalizeAttrs(def, call.attrs, attrContext(call));
  // Attributes already whole (what the runtime passes: a graph node's normalized attributes) stay the caller's object,
  // so the usual call goes to its kernel as it came, without a copy per dispatch.
  const attrs = sameAttrs(fresh, call.attrs) ? call.attrs : fresh;
  const entry: Known = { def, attrs };
  if (attrs !== call.attrs) remember(attrs, { def, attrs });
  // The caller's own object last: remembering the normal form may have emptied the Map.
  remember(call.attrs, entry);
  return entry;
}

/**
 * A "dim" attribute (a position offset, a cache's past length) may be a name while a graph is symbolic; the runtime
 * binds it before a step runs, so a kernel call still holding a name is the caller's error, not a size to guess.
 */
function unboundDim(def: AnyOpDef, call: KernelCall<unknown>, attrs: Readonly<Record<string, unknown>>): void {
  for (const field of dimFields(def)) {
    const v = attrs[field];
    if (typeof v === "string")
      attrContext(call).fail(
        field,
        "unbound dim name",
        "an integer (the runtime binds dim names before a kernel runs)",
        JSON.stringify(v),
      );
  }
}

/** The "dim" attributes of an op, listed once per declaration. */
const DIM_FIELDS = new WeakMap<AnyOpDef, readonly string[]>();
function dimFields(def: AnyOpDef): readonly string[] {
  let fields = DIM_FIELDS.get(def);
  if (fields === undefined) {
    const specs = def.attrs as Record<string, AttrSpec>;
    fields = Object.keys(specs).filter((k) => specs[k]!.type === "dim");
    DIM_FIELDS.set(def, fields);
  }
  return fields;
}

/** Same keys, each value the same (arrays and expressions by content): run once per attribute object. */
function sameAttrs(a: Readonly<Record<string, unknown>>, b: Readonly<Record<string, unknown>>): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const k of keys) if (!Object.hasOwn(b, k) || !sameValue(a[k], b[k])) return false;
  return true;
}

/** Equal numbers, strings, booleans and null; arrays and plain objects (expressions) equal member by member. */
function sameValue(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => sameValue(x, b[i]));
  return !Array.isArray(b) && sameAttrs(a as Record<string, unknown>, b as Record<string, unknown>);
}

/** Attribute failures as "attr" errors naming `<node>.<field>`, as kernels have always reported them. */
function attrContext(call: KernelCall<unknown>): OpContext {
  return {
    node: call.node,
    fail(field, what, expected = "", got = ""): never {
      const subject = field ? `${call.node}.${field}` : call.node;
      throw fieldError("attr", subject, `${what} of op ${call.kind}`, expected, got);
    },
  };
}

/**
 * Shape-rule failures as ShapeErrors naming `<node>.<input>`; a failure about an input the call left out (an optional
 * one its attributes need, as weight decay needs the parameter) is an "input" error instead, and one naming an
 * attribute an "attr" error.
 */
function shapeContext(call: KernelCall<unknown>, def: AnyOpDef): OpContext {
  return {
    node: call.node,
    fail(field, what, expected = "", got = ""): never {
      const subject = field ? `${call.node}.${field}` : call.node;
      const slot = def.inputs.findIndex((spec) => spec.name === field);
      if (slot >= 0 && (call.inputs[slot] === undefined || call.inputs[slot] === null))
        throw fieldError("input", subject, what, expected, got);
      // An attribute the inputs' shapes rule out (pad's axis past the rank) is the attribute's error; one that is
      // itself a shape (sum-to's target) stays a shape error.
      const spec =
        slot < 0 && Object.hasOwn(def.attrs, field) ? (def.attrs as Record<string, AttrSpec>)[field] : undefined;
      if (spec !== undefined && spec.type !== "dims") throw fieldError("attr", subject, what, expected, got);
      throw new ShapeError(subject, what, expected, got);
    },
  };
}

function inputError(
  call: KernelCall<unknown>,
  name: string,
  what: string,
  expected: string,
  got: string,
  after = "",
): AttnGraphError {
  return fieldError("input", `${call.node}.${name}`, `${what} of op ${call.kind}${after}`, expected, got);
}

/** An error of `code` naming `subject` (`<node>.<field>`), with what was expected and what came. */
function fieldError(code: "input" | "attr", subject: string, what: string, expected: string, got: string) {
  return new AttnGraphError(code, describe(subject, what, expected, got), { subject, expected, got });
}
