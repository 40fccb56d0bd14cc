// A score or mask modification's expression (golden-flex FORMAT.md; @attngraph/graph's expr/) as plain opset-17 ONNX
// nodes over tensors that broadcast to the scores' [B, H, L, S]: the position variables are int64 Range tensors of
// shapes [B,1,1,1], [1,H,1,1], [1,1,L,1] and [1,1,1,S] built from the Shape of x (symbolic dims keep working), the
// score is scale · x. The numerics follow compileExpr (the cpu executor's): integers as int64 (exact), numbers as
// float32, an integer converted to float where an operation mixes it with a number, `mod` with the sign of the
// divisor, `div` always true division, `floor` an integer. Each gathered read is a Gather on the flattened tensor at
// Σ index_a · stride_a, each index clamped into its axis first: ONNX evaluates both branches of Where (and both
// operands of And/Or), so a read that compileExpr never makes (a where-guarded one) must not fail or wrap around.
import type { Expr, ExprCall, ExprInput, SymShape } from "@attngraph/graph";
import type { Lowering } from "../lowering.js";

/** Integer, number, true/false: the checker's types. */
type Ty = "int" | "num" | "bool";

/**
 * A lowered (sub-)expression: a literal, or an ONNX value with its element type. An integer may be held as float32
 * (floor of a number, kept in float so that ±∞ stays ±∞ until it is used as an integer).
 */
type Val =
  | { readonly lit: number; readonly ty: "int" | "num" }
  | { readonly name: string; readonly ty: Ty; readonly elem: "int64" | "float" | "bool" };

const ONNX_FLOAT = 1;
const ONNX_INT64 = 7;

/** How a lowering reads the expression's world: the scores x [B, H, L, S], the score (score-mod), the gathered slots. */
export interface ExprEnv {
  readonly l: Lowering;
  /** The ONNX value of the scores [B, H, L, S] (positions come from its shape). */
  readonly x: string;
  /** The score's ONNX value (scale · x), for a score modification. */
  readonly score?: () => string;
  /** The gathered inputs' names, slot by slot (the node's `inputs` attribute). */
  readonly inputs: readonly string[];
  /** An elementwise expression's inputs: a read with no index of one of these names is that ONNX value itself. */
  readonly elements?: ReadonlyMap<string, string>;
}

/** `e` as an ONNX value broadcastable to [B, H, L, S]: float32 for a number or integer, bool for true/false. */
export function lowerExpr(env: ExprEnv, e: Expr): { readonly name: string; readonly ty: Ty } {
  const lowering = new ExprLowering(env);
  const v = lowering.lower(e);
  return v.ty === "bool" ? { name: lowering.bool(v), ty: "bool" } : { name: lowering.asFloatOf(v), ty: v.ty };
}

class ExprLowering {
  readonly #env: ExprEnv;
  readonly #l: Lowering;
  readonly #positions = new Map<string, string>();

  constructor(env: ExprEnv) {
    this.#env = env;
    this.#l = env.l;
  }

  lower(e: Expr): Val {
    if (typeof e === "number") return { lit: e, ty: Number.isInteger(e) ? "int" : "num" };
    if (e === "score") {
      if (!this.#env.score)
        return this.#l.unsupported(
          "a mask modification reads the score",
          "b, h, q, kv, numbers or gathered inputs",
          "score",
        );
      return { name: this.#env.score(), ty: "num", elem: "float" };
    }
    if (typeof e === "string") return { name: this.#position(e), ty: "int", elem: "int64" };
    if (e.op === "input") return this.#read(e as ExprInput);
    return this.#call(e as ExprCall);
  }

  /** b, h, q or kv: Range(0, dim) reshaped to its axis of [B, H, L, S]. */
  #position(v: string): string {
    const axis = ["b", "h", "q", "kv"].indexOf(v);
    if (axis < 0) return this.#l.unsupported(`unknown variable ${v}`, "score, b, h, q or kv", v);
    let name = this.#positions.get(v);
    if (name === undefined) {
      const l = this.#l;
      const range = l.emit("Range", [
        l.constant("int64", [0], []),
        l.dimScalar({ of: this.#env.x, axis }),
        l.constant("int64", [1], []),
      ]);
      const dims = [1, 1, 1, 1];
      dims[axis] = -1;
      name = l.emit("Reshape", [range, l.constant("int64", dims)]);
      this.#positions.set(v, name);
    }
    return name;
  }

  /** A gathered read: Gather on the flattened input at Σ clamp(index_a) · stride_a, as float32. */
  #read(e: ExprInput): Val {
    const l = this.#l;
    const element = e.index.length === 0 ? this.#env.elements?.get(e.name) : undefined;
    if (element !== undefined) return { name: element, ty: "num", elem: "float" };
    const slotIndex = this.#env.inputs.indexOf(e.name);
    if (slotIndex < 0)
      return l.unsupported(
        `the expression reads ${e.name}, which is not among the node's gathered inputs`,
        this.#env.inputs.join(", ") || "no gathered inputs",
        e.name,
      );
    const slot = `g${slotIndex}`;
    const data = l.required(slot);
    const shape: SymShape = l.shapeOf(slot);
    if (shape.length !== e.index.length)
      return l.unsupported(
        `${e.name} has ${shape.length} axes, the read gives ${e.index.length} indices`,
        String(shape.length),
        String(e.index.length),
      );
    let flat: Val | undefined;
    let stride: Val = { lit: 1, ty: "int" };
    for (let a = shape.length - 1; a >= 0; a--) {
      const dim = shape[a]!;
      const index = this.#clamp(this.asInt(this.lower(e.index[a]!)), dim);
      const term = this.#intOp("Mul", { name: index, ty: "int", elem: "int64" }, stride);
      flat = flat === undefined ? term : this.#intOp("Add", flat, term);
      if (a > 0) stride = this.#intOp("Mul", stride, this.#dim(dim));
    }
    const source = shape.length === 1 ? data : l.emit("Reshape", [data, l.constant("int64", [-1])]);
    const gathered = l.emit("Gather", [source, this.asInt(flat ?? { lit: 0, ty: "int" })], { axis: 0 });
    return { name: gathered, ty: "num", elem: "float" }; // gathered inputs are float32 (the op's check)
  }

  /** A dim of a gathered input, as a literal when the export knows it. */
  #dim(dim: number | string): Val {
    const n = this.#l.known(dim);
    return n === undefined ? { name: this.#l.dimScalar(dim), ty: "int", elem: "int64" } : { lit: n, ty: "int" };
  }

  /** An int64 index clamped into [0, dim − 1]. */
  #clamp(index: string, dim: number | string): string {
    const l = this.#l;
    const d = this.#dim(dim);
    const last =
      "lit" in d
        ? l.constant("int64", [Math.max(d.lit - 1, 0)], [])
        : l.emit("Sub", [d.name, l.constant("int64", [1], [])]);
    return l.emit("Clip", [index, l.constant("int64", [0], []), last]);
  }

  /** Integer arithmetic folding literals (strides and offsets of known shapes stay constants). */
  #intOp(op: "Add" | "Mul", a: Val, b: Val): Val {
    if ("lit" in a && "lit" in b) return { lit: op === "Add" ? a.lit + b.lit : a.lit * b.lit, ty: "int" };
    if (op === "Mul" && "lit" in b && b.lit === 1) return a;
    if (op === "Mul" && "lit" in a && a.lit === 1) return b;
    return { name: this.#l.emit(op, [this.asInt(a), this.asInt(b)]), ty: "int", elem: "int64" };
  }

  #call(e: ExprCall): Val {
    const l = this.#l;
    const args = e.args.map((a) => this.lower(a));
    const allInt = args.every((a) => a.ty === "int");
    const asFloat = (a: Val) => this.asFloatOf(a);
    const asInt = (a: Val) => this.asInt(a);
    // `op` over every argument read as `as`: a float, an int64 or a bool value.
    const emitted = (op: string, as: (a: Val) => string, ty: Ty, elem: "int64" | "float" | "bool"): Val => ({
      name: l.emit(op, args.map(as)),
      ty,
      elem,
    });
    const num = (op: string): Val => emitted(op, asFloat, "num", "float");
    const arith = (op: string): Val => (allInt ? emitted(op, asInt, "int", "int64") : num(op));
    const compared = (op: string): string => l.emit(op, args.map(allInt ? asInt : asFloat));
    const compare = (op: string): Val => ({ name: compared(op), ty: "bool", elem: "bool" });
    const logic = (op: string): Val => emitted(op, (a) => this.bool(a), "bool", "bool");
    switch (e.op) {
      case "add":
        return arith("Add");
      case "sub":
        return arith("Sub");
      case "mul":
        return arith("Mul");
      case "div":
        return num("Div");
      case "min":
        return arith("Min");
      case "max":
        return arith("Max");
      case "neg":
        return arith("Neg");
      case "abs":
        return arith("Abs");
      case "mod":
        return allInt ? this.#intMod(args[0]!, args[1]!) : this.#floatMod(args[0]!, args[1]!);
      case "eq":
        return compare("Equal");
      case "ne":
        return { name: l.emit("Not", [compared("Equal")]), ty: "bool", elem: "bool" };
      case "lt":
        return compare("Less");
      case "le":
        return compare("LessOrEqual");
      case "gt":
        return compare("Greater");
      case "ge":
        return compare("GreaterOrEqual");
      case "and":
        return logic("And");
      case "or":
        return logic("Or");
      case "not":
        return logic("Not");
      case "exp":
        return num("Exp");
      case "log":
        return num("Log");
      case "tanh":
        return num("Tanh");
      case "sqrt":
        return num("Sqrt");
      case "sigmoid":
        return num("Sigmoid");
      case "floor": {
        const a = args[0]!;
        if (a.ty === "int") return a;
        return { name: l.emit("Floor", [this.asFloatOf(a)]), ty: "int", elem: "float" };
      }
      case "where": {
        const [c, a, b] = args as [Val, Val, Val];
        const cond = this.bool(c);
        if (a.ty === "bool" && b.ty === "bool") {
          // onnxruntime has no Where over bool: (c ∧ a) ∨ (¬c ∧ b).
          const taken = l.emit("And", [cond, this.bool(a)]);
          return {
            name: l.emit("Or", [taken, l.emit("And", [l.emit("Not", [cond]), this.bool(b)])]),
            ty: "bool",
            elem: "bool",
          };
        }
        if (a.ty === "int" && b.ty === "int") {
          // Both held as float (floors of numbers): stay float; otherwise int64.
          const float = !("lit" in a) && a.elem === "float" && !("lit" in b) && b.elem === "float";
          return float
            ? { name: l.emit("Where", [cond, a.name, b.name]), ty: "int", elem: "float" }
            : { name: l.emit("Where", [cond, this.asInt(a), this.asInt(b)]), ty: "int", elem: "int64" };
        }
        return { name: l.emit("Where", [cond, this.asFloatOf(a), this.asFloatOf(b)]), ty: "num", elem: "float" };
      }
      default:
        return l.unsupported(`unknown expression operation ${String(e.op)}`);
    }
  }

  /** Python's % on integers: ONNX Mod (fmod 0 takes the divisor's sign); a zero divisor is replaced (no int trap). */
  #intMod(a: Val, b: Val): Val {
    const l = this.#l;
    let divisor = this.asInt(b);
    if (!("lit" in b && b.lit !== 0)) {
      const one = l.constant("int64", [1], []);
      divisor = l.emit("Where", [l.emit("Equal", [divisor, l.constant("int64", [0], [])]), one, divisor]);
    }
    return { name: l.emit("Mod", [this.asInt(a), divisor], { fmod: 0 }), ty: "int", elem: "int64" };
  }

  /** Python's % on numbers: r = fmod(a, b) (exact), plus b where r is non-zero and its sign differs from b's. */
  #floatMod(a: Val, b: Val): Val {
    const l = this.#l;
    const x = this.asFloatOf(a);
    const y = this.asFloatOf(b);
    const zero = l.constant("float", [0], []);
    const r = l.emit("Mod", [x, y], { fmod: 1 });
    const differ = l.emit("Xor", [l.emit("Less", [r, zero]), l.emit("Less", [y, zero])]);
    const adjust = l.emit("And", [l.emit("Not", [l.emit("Equal", [r, zero])]), differ]);
    return { name: l.emit("Where", [adjust, l.emit("Add", [r, y]), r]), ty: "num", elem: "float" };
  }

  bool(v: Val): string {
    if ("lit" in v || v.elem !== "bool") return this.#l.unsupported("a number where true/false is expected");
    return v.name;
  }

  /** The value as an int64 ONNX value (a float-held integer or a gathered number is cast: truncation). */
  asInt(v: Val): string {
    if ("lit" in v) return this.#l.constant("int64", [v.lit], []);
    if (v.elem === "int64") return v.name;
    return this.#l.emit("Cast", [v.name], { to: ONNX_INT64 });
  }

  /** The value as a float32 ONNX value. */
  asFloatOf(v: Val): string {
    if ("lit" in v) return this.#l.constant("float", [v.lit], []);
    if (v.elem === "float") return v.name;
    if (v.elem === "bool") return this.#l.unsupported("true/false where a number is expected");
    return this.#l.emit("Cast", [v.name], { to: ONNX_FLOAT });
  }
}
