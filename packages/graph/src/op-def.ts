// An op kind is declared once, as data: its inputs, its attributes and its shape rule. Executors import these
// declarations (for the attribute types) and register kernels by the op's `kind`; they never redefine them.
import type { Dim, SymShape } from "./dims.js";
import { formatDims } from "./dims.js";
import { AttnGraphError, type DType } from "@attngraph/tensor";
import { GraphValidationError, show } from "./errors.js";
import { copyJson } from "./expr/copy-json.js";
import { FLOAT32_MAX } from "./float32.js";
import type { VjpRule } from "./vjp.js";
import type { Expr } from "./expr/types.js";

export interface OpInput {
  readonly name: string;
  readonly optional?: boolean;
  /** Required rank, checked before the shape rule runs. */
  readonly rank?: number;
  /**
   * The element type the slot takes (default "float32"). Token ids and class targets are "int32": a float32 value
   * there (or an int32 one in a float32 slot) is a validation error naming the node and slot.
   */
  readonly dtype?: DType;
  /**
   * The axis of this input that indexes attention heads (1 for [B, H, L, D]), where the op reads per-head values: how
   * tools (head ablation, per-head patching) find the heads of a value from the graph instead of guessing by rank.
   */
  readonly heads?: number;
  readonly doc?: string;
}

/**
 * "dim": one integer or the name of a symbolic dim, bound when a run's shapes are (a decode session binds the cache's
 * past length `P` that way); kernels always get the bound integer. "dims": a shape whose entries may be names.
 */
export type AttrType =
  | "number"
  | "integer"
  | "boolean"
  | "string"
  | "dim"
  | "dims"
  | "integers"
  | "numbers"
  | "strings"
  | "expr";

export interface AttrSpec {
  readonly type: AttrType;
  /** Used when the attribute is absent. Absent without a default and not `nullable` is an error. */
  readonly default?: unknown;
  /** `null` is a valid value (meaning "off"). */
  readonly nullable?: boolean;
  /** For strings: the allowed values. */
  readonly oneOf?: readonly string[];
  /** Inclusive bounds for numbers. */
  readonly min?: number;
  readonly max?: number;
  /**
   * A dropout seed (an integer in uint32): the runtime folds each run's dropout step into it (`dropoutSeedAt`) before a
   * kernel sees it, so every run draws its own mask, and the forward and backward of one run draw the same one.
   */
  readonly dropoutSeed?: boolean;
  readonly doc?: string;
}

/** What shape rules and attribute checks receive: the node's name, and a way to fail that names it. */
export interface OpContext {
  readonly node: string;
  /** Throws a GraphValidationError naming `node.field`. */
  fail(field: string, what: string, expected?: string, got?: string): never;
}

export interface OpDef<A extends object = Record<string, unknown>> {
  /** The op's name, e.g. "softmax". Lowercase with dashes by convention. */
  readonly kind: string;
  readonly doc: string;
  readonly inputs: readonly OpInput[];
  readonly attrs: { readonly [K in keyof A]-?: AttrSpec };
  /** Cross-field attribute rules, after each attribute passed its own spec. */
  readonly checkAttrs?: (attrs: A, ctx: OpContext) => void;
  /** The output shape; inputs are in declaration order, `undefined` for an absent optional input. */
  readonly inferShape: (inputs: readonly (SymShape | undefined)[], attrs: A, ctx: OpContext) => SymShape;
  /** The output's element type (default "float32"). */
  readonly outputDtype?: DType;
  /** The axis of the output that indexes attention heads, where the op makes per-head values (see OpInput.heads). */
  readonly outputHeads?: number;
  /** True for ops whose output can be a view of input 0 (reshape, transpose, slice). */
  readonly view?: boolean;
  /**
   * The index of an input whose memory the output may take over when nothing reads that input afterwards (elementwise
   * and row-wise ops: mask, softmax, dropout). Its kernels must give the same result when `out` aliases that input.
   */
  readonly inPlace?: number;
  /**
   * True for ops whose output holds −∞ by design where they hide an entry (mask, ALiBi on masked scores): the
   * runtime's `checkNumerics` accepts −∞ there (and in views and copies of it), NaN and +∞ never.
   */
  readonly hidesWithMinusInfinity?: boolean;
  /**
   * The backward rule (vector-Jacobian product) as graph nodes, used by @attngraph/autodiff's `grad()`. An op without
   * one cannot be differentiated through: grad() fails with "unsupported: gradient of op <kind>" naming the node.
   */
  readonly vjp?: VjpRule<A>;
  /**
   * For an elementwise op declared as an expression (definePointwiseOp): its value as an expression over the slots
   * x0, x1, … (the op's inputs in declared order), checked. The scheduler lowers such a node to one "pointwise" step,
   * which every executor runs by evaluating the expression; the same function must return the same object for the
   * same attributes (executors cache what they compile by it).
   */
  readonly pointwise?: (attrs: A) => Expr;
}

/** Declares an op kind, checking the declaration itself. Use it for ops of your own. */
export function defineOp<A extends object>(def: OpDef<A>): OpDef<A> {
  if (!/^[a-z][a-z0-9-]*(\.[a-z0-9-]+)*$/i.test(def.kind)) {
    throw new GraphValidationError("defineOp", "invalid op kind", "letters, digits and dashes", show(def.kind));
  }
  const names = new Set<string>();
  for (const input of def.inputs) {
    if (names.has(input.name)) throw new GraphValidationError(`op ${def.kind}`, `input "${input.name}" declared twice`);
    names.add(input.name);
  }
  if (def.inputs.length === 0)
    throw new GraphValidationError(`op ${def.kind}`, "declares no inputs", "at least one input");
  if (typeof def.inferShape !== "function")
    throw new GraphValidationError(
      `op ${def.kind}`,
      "declares no shape rule",
      "an inferShape function",
      show(def.inferShape),
    );
  return Object.freeze(def);
}

export function makeContext(node: string): OpContext {
  return {
    node,
    fail(field, what, expected, got): never {
      throw new GraphValidationError(field ? `${node}.${field}` : node, what, expected, got);
    },
  };
}

/** Applies defaults and checks every attribute against its spec; unknown attributes are an error. */
export function normalizeAttrs(
  def: AnyOpDef,
  raw: Readonly<Record<string, unknown>>,
  ctx: OpContext,
): Record<string, unknown> {
  const specs = def.attrs as Record<string, AttrSpec>;
  for (const key of Object.keys(raw)) {
    // own keys only: "toString" or "constructor" must not pass as attributes through Object.prototype
    if (!Object.hasOwn(specs, key)) {
      ctx.fail(
        key,
        `unknown attribute for op ${def.kind}`,
        Object.keys(specs).join(", ") || "no attributes",
        show(key),
      );
    }
  }
  // Read own keys, and build `out` from entries (own properties): attributes named "toString" or "__proto__" are legal,
  // and neither `raw[key]` nor `out[key] = v` may reach Object.prototype for them.
  const entries: [string, unknown][] = [];
  for (const [key, spec] of Object.entries(specs)) {
    let v = Object.hasOwn(raw, key) ? raw[key] : undefined;
    if (v === undefined) v = spec.default;
    if (v === undefined && !spec.nullable) ctx.fail(key, "missing attribute", spec.type);
    if (v === undefined || v === null) {
      if (!spec.nullable) ctx.fail(key, "attribute may not be null", spec.type, "null");
      entries.push([key, null]);
      continue;
    }
    checkAttr(key, spec, v, ctx);
    // An expression is copied whole (and bounded): the node must not change when the caller's object does.
    entries.push([key, spec.type === "expr" ? copyJson(v, `${ctx.node}.${key}`) : Array.isArray(v) ? [...v] : v]);
  }
  const out: Record<string, unknown> = Object.fromEntries(entries);
  if (def.checkAttrs) userRule(def, "attribute check", ctx, () => def.checkAttrs!(out as never, ctx));
  return out;
}

/**
 * Runs an op author's rule. A GraphValidationError (from `ctx.fail`) or any other AttnGraphError passes through; any
 * other exception (a TypeError from a rule that indexed a missing input, a plain `throw new Error`) becomes a
 * GraphValidationError naming the node, with the original as `cause`, so a user's bug never surfaces unnamed.
 */
function userRule<T>(def: AnyOpDef, rule: string, ctx: OpContext, run: () => T): T {
  try {
    return run();
  } catch (e) {
    if (AttnGraphError.isInstance(e)) throw e;
    const message = e instanceof Error ? e.message : show(e);
    throw new GraphValidationError(
      ctx.node,
      `${rule} of op ${def.kind} threw: ${message}`,
      undefined,
      undefined,
      "validation",
      e,
    );
  }
}

function checkAttr(key: string, spec: AttrSpec, v: unknown, ctx: OpContext): void {
  const bad = (expected: string): never => ctx.fail(key, "invalid attribute", expected, show(v));
  switch (spec.type) {
    case "number":
      if (typeof v !== "number" || !Number.isFinite(v)) bad("a finite number");
      break;
    case "integer":
      if (!Number.isSafeInteger(v)) bad("an integer");
      break;
    case "boolean":
      if (typeof v !== "boolean") bad("true or false");
      break;
    case "string":
      if (typeof v !== "string") bad("a string");
      if (spec.oneOf && !spec.oneOf.includes(v as string)) bad(`one of ${spec.oneOf.join(", ")}`);
      break;
    case "dim":
      if (!((typeof v === "string" && v.length > 0) || Number.isSafeInteger(v))) bad("an integer or a dim name");
      break;
    case "dims":
      if (!Array.isArray(v) || !v.every((d) => (typeof d === "string" && d.length > 0) || Number.isSafeInteger(d)))
        bad("an array of dims (integers or names)");
      break;
    case "integers":
      if (!Array.isArray(v) || !v.every((d) => Number.isSafeInteger(d))) bad("an array of integers");
      break;
    case "numbers":
      if (!Array.isArray(v) || !v.every((d) => typeof d === "number" && Number.isFinite(d)))
        bad("an array of finite numbers");
      break;
    case "strings":
      if (!Array.isArray(v) || !v.every((d) => typeof d === "string")) bad("an array of strings");
      break;
    case "expr":
      // The form is checked where the inputs' ranks are known (the op's shape rule, checkExpr); here only the kind.
      if (!(typeof v === "number" || typeof v === "string" || (typeof v === "object" && !Array.isArray(v))))
        bad("an expression: a number, a variable or { op, ... }");
      break;
  }
  // Kernels take number attributes as float32 (WGSL uniforms, f32 in wasm): beyond its range a scale of 1e39 would
  // become Infinity there and the run would end in NaN. (Integer attributes are safe integers, far inside the range.)
  if (spec.type === "number" || spec.type === "numbers") {
    const values = Array.isArray(v) ? (v as number[]) : [v as number];
    if (values.some((x) => Math.abs(x) > FLOAT32_MAX))
      bad(`${spec.type === "number" ? "a number" : "numbers"} within the float32 range (|v| <= ${FLOAT32_MAX})`);
  }
  if (typeof v === "number") {
    if (spec.min !== undefined && v < spec.min) bad(`>= ${spec.min}`);
    if (spec.max !== undefined && v > spec.max) bad(`<= ${spec.max}`);
  }
}

/** Checks input ranks declared on the op, then runs its shape rule. */
export function inferShape(
  def: AnyOpDef,
  shapes: readonly (SymShape | undefined)[],
  attrs: object,
  ctx: OpContext,
): SymShape {
  def.inputs.forEach((spec, i) => {
    const s = shapes[i];
    if (s && spec.rank !== undefined && s.length !== spec.rank) {
      ctx.fail(
        spec.name,
        `input must have rank ${spec.rank}`,
        `rank ${spec.rank}`,
        `${formatDims(s)} (rank ${s.length})`,
      );
    }
  });
  const out: unknown = userRule(def, "shape rule", ctx, () => def.inferShape(shapes, attrs, ctx));
  if (
    !Array.isArray(out) ||
    !out.every(
      (d: unknown) => (typeof d === "string" && d.length > 0) || (Number.isSafeInteger(d) && (d as number) >= 0),
    )
  ) {
    ctx.fail(
      "",
      `shape rule of op ${def.kind} returned an invalid shape`,
      "an array of non-negative integers or dim names",
      show(out),
    );
  }
  return out as Dim[];
}

/** An op of any attribute type: what registries and lists hold. `any` is deliberate: attrs types differ per op. */
// biome-ignore lint/suspicious/noExplicitAny: an op of any attributes: OpDef is contravariant in them (its rules take them)
export type AnyOpDef = OpDef<any>;
