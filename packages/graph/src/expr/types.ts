// Score and mask modifications as data: a pointwise expression over the score, the position variables and elements
// gathered from input tensors, in the JSON form of shared/golden-flex/FORMAT.md (FlexAttention's score_mod and
// mask_mod, written as data so that a variant can be saved, diffed, exported and compiled for every executor).

/** The position variables (integers) and the score (a number, only in a score modification). */
export type ExprVar = "score" | "b" | "h" | "q" | "kv";

export const POSITION_VARS: readonly ExprVar[] = ["b", "h", "q", "kv"];

/** An element of input tensor `name` at one integer index per axis. */
export interface ExprInput {
  readonly op: "input";
  readonly name: string;
  readonly index: readonly Expr[];
}

/** An operation on the values of `args`. */
export interface ExprCall {
  readonly op: ExprOpName;
  readonly args: readonly Expr[];
}

export type Expr = number | ExprVar | ExprInput | ExprCall;

/** What a (sub-)expression evaluates to: an integer (positions, floor, integer arithmetic), a number or true/false. */
export type ExprType = "int" | "num" | "bool";

export type ExprOpName =
  | "add"
  | "sub"
  | "mul"
  | "div"
  | "min"
  | "max"
  | "mod"
  | "eq"
  | "ne"
  | "lt"
  | "le"
  | "gt"
  | "ge"
  | "and"
  | "or"
  | "not"
  | "neg"
  | "abs"
  | "exp"
  | "log"
  | "tanh"
  | "sqrt"
  | "floor"
  | "sigmoid"
  | "where";

export function isInput(e: Expr): e is ExprInput {
  return typeof e === "object" && e.op === "input";
}

export function isCall(e: Expr): e is ExprCall {
  return typeof e === "object" && e.op !== "input";
}
