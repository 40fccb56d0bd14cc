// The variants of `--problem flex` (issue 27): each one as FlexAttention's score_mod / mask_mod in the JSON expression
// form of ../shared/golden-flex/FORMAT.md, with the tensors the expressions gather from. One place defines them, so the
// attngraph graphs, the ONNX models and the test's reference all compute the same function.

/** A variant: the rows of one `variant` in the table and the results file. */
export type FlexVariant = "causal" | "causal-builtin" | "alibi" | "user-mask" | "softcap" | "document" | "window";

/** Table order. `causal-builtin` is the built-in fused causal path (score → mask{causal} → softmax → weighted-sum). */
export const FLEX_VARIANTS: readonly FlexVariant[] = [
  "causal",
  "causal-builtin",
  "alibi",
  "user-mask",
  "softcap",
  "document",
  "window",
];

/** `layer`: the whole attention layer with its projections (x [B, T, d] → [B, T, d]); `core`: q, k, v [B, H, T, D] → [B, H, T, D]. */
export type FlexPart = "layer" | "core";
export const FLEX_PARTS: readonly FlexPart[] = ["layer", "core"];

/** The variants' constants: the sliding window (keys q − window < kv <= q) and the soft cap (Gemma 2's 50 for attention logits). */
export interface FlexConstants {
  readonly window: number;
  readonly softcap: number;
}
export const FLEX_CONSTANTS: FlexConstants = Object.freeze({ window: 128, softcap: 50 });

type Expr =
  | number
  | string
  | { readonly op: string; readonly args?: readonly Expr[]; readonly name?: string; readonly index?: readonly Expr[] };

const op = (name: string, ...args: Expr[]): Expr => ({ op: name, args });
const gather = (name: string, ...index: Expr[]): Expr => ({ op: "input", name, index });
const causalExpr = op("ge", "q", "kv");

/** What an expression variant adds to the core: its score and mask modifications and the names of what they gather. */
export interface FlexMods {
  readonly scoreMod: Expr | null;
  readonly maskMod: Expr | null;
  /** Gathered inputs by name, in the order the expressions first read them: `slopes` [H], `mask` [T, T], `doc` [B, T]. */
  readonly gathered: readonly ("slopes" | "mask" | "doc")[];
}

/**
 * The expressions of a variant (golden-flex's forms: flex-causal, flex-alibi-*, flex-softcap-causal, flex-document-
 * causal); every variant is causal. `causal-builtin` has none: it is not an expression variant.
 */
export function flexMods(variant: Exclude<FlexVariant, "causal-builtin">, c: FlexConstants = FLEX_CONSTANTS): FlexMods {
  switch (variant) {
    case "causal":
      return { scoreMod: null, maskMod: causalExpr, gathered: [] };
    case "alibi":
      return {
        scoreMod: op("add", "score", op("mul", gather("slopes", "h"), op("sub", "kv", "q"))),
        maskMod: causalExpr,
        gathered: ["slopes"],
      };
    case "user-mask":
      // 0/1 like buildAttention's userMask "mask" (0 hides the key), composed with causal by "and".
      return {
        scoreMod: null,
        maskMod: op("and", op("ne", gather("mask", "q", "kv"), 0), causalExpr),
        gathered: ["mask"],
      };
    case "softcap":
      return {
        scoreMod: op("mul", op("tanh", op("div", "score", c.softcap)), c.softcap),
        maskMod: causalExpr,
        gathered: [],
      };
    case "document":
      return {
        scoreMod: null,
        maskMod: op("and", op("eq", gather("doc", "b", "q"), gather("doc", "b", "kv")), causalExpr),
        gathered: ["doc"],
      };
    case "window":
      return { scoreMod: null, maskMod: op("and", causalExpr, op("lt", op("sub", "q", "kv"), c.window)), gathered: [] };
  }
}

/**
 * The ALiBi paper's slopes for H heads (its get_slopes), passed explicitly to every implementation: with n the largest
 * power of two <= H, head h < n gets 2^(−8(h+1)/n) and head n + k gets 2^(−4(2k+1)/n).
 */
export function alibiSlopes(h: number): number[] {
  const n = 2 ** Math.floor(Math.log2(h));
  return Array.from({ length: h }, (_, i) => (i < n ? 2 ** ((-8 * (i + 1)) / n) : 2 ** ((-4 * (2 * (i - n) + 1)) / n)));
}
