// The host half of the modifications inside the fused attention: a checked score and mask modification (and, for
// the backward, the score modification's derivative wrt the score, from derive()) compiled into one program of the
// module's vector instructions (assembly/expr-program.ts, which documents the encoding and runs it once per score
// tile). Compiled once per expression (cached by the checked copy a plan step keeps); per call only the gathered
// inputs' descriptors (address, shape, strides) are written next to it.
//
// Types follow the reference (compile.ts): every number is float32 after every operation, integers exact. An
// integer here is an int32 register only where int32 gives the reference's value: positions, integer literals in
// int32 range (not −0), and add, sub, mul, min, max, neg, abs and where of those; mod of those by a non-zero integer
// literal. Everything else that the checker calls an integer (floor of a number, mod by a variable, which may be 0
// and give NaN) is computed in float32 as the reference computes it, and a float32 index is checked to be an integer
// in range when it is read. `where`, `and` and `or` evaluate their branches' gathered reads only in the lanes the
// reference evaluates them (a predicate mask per read), so a read the reference never makes cannot fail here.
import { derive, EXPR_OPS, readSites, type Expr, type ExprInput } from "@attngraph/graph";

/** Opcodes: the module's (assembly/expr-program.ts) numbers. */
export const OP = {
  CONST: 0,
  VAR_Q: 1,
  VAR_KV: 2,
  VAR_B: 3,
  VAR_H: 4,
  I2F: 5,
  FADD: 10,
  FSUB: 11,
  FMUL: 12,
  FDIV: 13,
  FMIN: 14,
  FMAX: 15,
  FMOD: 16,
  IADD: 20,
  ISUB: 21,
  IMUL: 22,
  IMIN: 23,
  IMAX: 24,
  IMOD: 25,
  FNEG: 30,
  FABS: 31,
  FEXP: 32,
  FLOG: 33,
  FTANH: 34,
  FSQRT: 35,
  FSIGMOID: 36,
  FFLOOR: 37,
  INEG: 40,
  IABS: 41,
  FEQ: 50,
  FNE: 51,
  FLT: 52,
  FLE: 53,
  FGT: 54,
  FGE: 55,
  IEQ: 60,
  INE: 61,
  ILT: 62,
  ILE: 63,
  IGT: 64,
  IGE: 65,
  AND: 70,
  OR: 71,
  NOT: 72,
  SELECT: 73,
  GATHER: 80,
  GATHER_UNIFORM: 81,
  GATHER_ROW: 82,
} as const;

/** Ops that are one instruction named after them (F<OP>, and I<OP> where OP has one), and those yielding a mask. */
const NAMED_OPS = new Set([
  "add",
  "sub",
  "mul",
  "min",
  "max",
  "div",
  "neg",
  "abs",
  "exp",
  "log",
  "tanh",
  "sqrt",
  "sigmoid",
]);
const COMPARISONS = new Set(["eq", "ne", "lt", "le", "gt", "ge"]);
const opcode = (name: string): number | undefined => (OP as Readonly<Record<string, number>>)[name];

const HEADER_WORDS = 6;
/** Flags in an instruction's op word (assembly/expr-program.ts): one vector only, then copied across the tile. */
const UNIFORM_FLAG = 0x100;
const SPLAT_FLAG = 0x200;
const INSTR_WORDS = 6;
/** The registers the kernel fills: the scaled score (float32) and the lanes it shows (a mask). */
const SCORE = 0;
const SHOWN = 1;

/** A gathered read the program makes, for the message of its index error. */
export interface ProgramSite {
  /** `node.scoreMod.args[1].index[0]`-style subject (ExprIndexError's). */
  readonly subject: string;
  readonly input: string;
}

/** A compiled program: its words with the descriptors left blank, and where each gathered input's goes. */
export interface ExprProgram {
  readonly words: Int32Array;
  readonly registers: number;
  /** Word offset of each gathered input's descriptor (3 + 2 · rank words), by name. */
  readonly descriptors: ReadonlyMap<string, { readonly offset: number; readonly rank: number }>;
  readonly sites: readonly ProgramSite[];
}

export interface ProgramSource {
  readonly scoreMod: Expr | null;
  readonly maskMod: Expr | null;
  /** Also compute ∂scoreMod/∂score (the backward wrt q and k). */
  readonly derivative: boolean;
  /** Subject prefix of sites: the node (`attn` → `attn.scoreMod.args[1]`). */
  readonly node: string;
  /**
   * For an elementwise expression (the pointwise kernel): the inputs read element by element (reads with no index),
   * in registers 2, 3, … that the kernel fills a tile at a time; `scoreMod` is then the expression.
   */
  readonly elements?: readonly string[];
}

type RegType = "i" | "f" | "m";
interface Val {
  readonly v: number;
  readonly t: RegType;
  /** The same in every lane of a tile (literals, b, h and what only they decide): a read of it is made once. */
  readonly u?: boolean;
}
interface Instr {
  readonly op: number;
  readonly dst: number;
  readonly srcs: readonly number[];
  readonly imm?: number;
  /** GATHER: the input's name, the read's site, and per axis whether the index is float32. */
  readonly input?: string;
  readonly site?: number;
  readonly floatIndex?: readonly boolean[];
}

const I32_MIN = -(2 ** 31);
const I32_MAX = 2 ** 31 - 1;
const f32bits = new Int32Array(1);
const f32view = new Float32Array(f32bits.buffer);

/** The bits of x as float32 (a CONST of a float32 register). */
function bitsOf(x: number): number {
  f32view[0] = x;
  return f32bits[0]!;
}

const isIntLiteral = (x: number) => Number.isInteger(x) && !Object.is(x, -0) && x >= I32_MIN && x <= I32_MAX;

/** Compiles the modifications (checked by checkExpr) into a program (see the file's head). */
export function compileProgram(src: ProgramSource): ExprProgram {
  const instrs: Instr[] = [];
  const elements = src.elements ?? [];
  const fixed = 2 + elements.length;
  let nextV = fixed; // virtual registers 0 and 1: SCORE and SHOWN; then the elements' registers
  const elementOf = (e: ExprInput): number => (e.index.length === 0 ? elements.indexOf(e.name) : -1);
  const sites: ProgramSite[] = [];
  const siteOf = new Map<ExprInput, number>();
  const ranks = new Map<string, number>();
  for (const [field, e] of [
    ["scoreMod", src.scoreMod],
    ["maskMod", src.maskMod],
  ] as const) {
    if (e === null) continue;
    for (const s of readSites(e)) {
      siteOf.set(s.read, sites.length);
      sites.push({ subject: `${src.node}.${field}${s.path}`, input: s.read.name });
      ranks.set(s.read.name, s.read.index.length);
    }
  }
  const reads = new WeakMap<object, boolean>();
  const hasReads = (e: Expr): boolean => {
    if (typeof e !== "object") return false;
    let r = reads.get(e);
    if (r === undefined) {
      r = e.op === "input" ? elementOf(e) < 0 : e.args.some(hasReads); // an element is a register, not a read
      reads.set(e, r);
    }
    return r;
  };
  const uniform = new Set<number>();
  // Row-uniform: the same in every lane of a tile's row (uniform, or made from q too): a read whose last index is kv
  // and whose others are row-uniform reads one contiguous run of its input per row (GATHER_ROW: a user mask[q, kv]).
  const rowUniform = new Set<number>();
  let kvReg = -1;
  const push = (op: number, t: RegType, srcs: readonly number[], extra: Partial<Instr> = {}): Val => {
    const dst = nextV++;
    if (op === OP.VAR_KV) kvReg = dst;
    const rowOperands = op === OP.GATHER ? [] : srcs;
    if (
      op === OP.CONST ||
      op === OP.VAR_B ||
      op === OP.VAR_H ||
      op === OP.VAR_Q ||
      (op !== OP.VAR_KV && op !== OP.GATHER && srcs.length > 0 && rowOperands.every((s) => rowUniform.has(s)))
    )
      rowUniform.add(dst);
    // Uniform: a literal, b or h, or an operation of uniform operands (a read's predicate does not count: it only
    // says whether the read is made).
    const operands = op === OP.GATHER ? srcs.slice(1) : srcs;
    const u =
      op === OP.CONST ||
      op === OP.VAR_B ||
      op === OP.VAR_H ||
      (op !== OP.VAR_Q && op !== OP.VAR_KV && srcs.length > 0 && operands.every((s) => uniform.has(s)));
    if (u) uniform.add(dst);
    const index = srcs.slice(1);
    const rowRead =
      op === OP.GATHER &&
      !u &&
      index.length > 0 &&
      index[index.length - 1] === kvReg &&
      !extra.floatIndex?.[index.length - 1] &&
      index.slice(0, -1).every((s) => rowUniform.has(s));
    instrs.push({ op: op === OP.GATHER && u ? OP.GATHER_UNIFORM : rowRead ? OP.GATHER_ROW : op, dst, srcs, ...extra });
    return { v: dst, t, u };
  };
  // Common sub-expressions once: by node (and, for one that reads, by the predicate its reads run under), literals
  // and variables by value; conversions by register.
  const memo = new Map<unknown, Val>();
  const memoOf = (key: unknown, make: () => Val): Val => {
    let x = memo.get(key);
    if (x === undefined) {
      x = make();
      memo.set(key, x);
    }
    return x;
  };
  const predKeys = new Map<number, Map<object, Val>>();
  const toF = (x: Val): Val => (x.t === "f" ? x : memoOf(`i2f ${x.v}`, () => push(OP.I2F, "f", [x.v])));
  /** The predicate p ∧ m (p ∧ ¬m): where a branch's reads run. */
  const and = (p: number, m: Val): number => memoOf(`and ${p} ${m.v}`, () => push(OP.AND, "m", [p, m.v])).v;
  const andNot = (p: number, m: Val): number =>
    and(
      p,
      memoOf(`not ${m.v}`, () => push(OP.NOT, "m", [m.v])),
    );

  const emit = (e: Expr, pred: number): Val => {
    if (typeof e === "number") {
      return isIntLiteral(e)
        ? memoOf(`i ${e}`, () => push(OP.CONST, "i", [], { imm: e }))
        : memoOf(`f ${bitsOf(e)}`, () => push(OP.CONST, "f", [], { imm: bitsOf(e) }));
    }
    if (e === "score") return { v: SCORE, t: "f" };
    if (typeof e === "string") {
      const op = e === "q" ? OP.VAR_Q : e === "kv" ? OP.VAR_KV : e === "b" ? OP.VAR_B : OP.VAR_H;
      return memoOf(`var ${e}`, () => push(op, "i", []));
    }
    const byPred = hasReads(e) ? (predKeys.get(pred) ?? predKeys.set(pred, new Map()).get(pred)!) : undefined;
    const known = byPred ? byPred.get(e) : (memo.get(e) as Val | undefined);
    if (known) return known;
    const made = make(e, pred);
    if (byPred) byPred.set(e, made);
    else memo.set(e, made);
    return made;
  };

  const make = (e: Exclude<Expr, number | string>, pred: number): Val => {
    if (e.op === "input") {
      const k = elementOf(e);
      if (k >= 0) return { v: 2 + k, t: "f" };
      const idx = e.index.map((i) => emit(i, pred));
      let site = siteOf.get(e);
      if (site === undefined) {
        site = sites.length;
        sites.push({ subject: `${src.node}.scoreMod (derivative)`, input: e.name });
        ranks.set(e.name, e.index.length);
      }
      return push(OP.GATHER, "f", [pred, ...idx.map((x) => x.v)], {
        input: e.name,
        site,
        floatIndex: idx.map((x) => x.t === "f"),
      });
    }
    const a = e.args;
    switch (e.op) {
      case "where": {
        const c = emit(a[0]!, pred);
        // A branch's reads run only where the reference takes it.
        const x = emit(a[1]!, hasReads(a[1]!) ? and(pred, c) : pred);
        const y = emit(a[2]!, hasReads(a[2]!) ? andNot(pred, c) : pred);
        if (x.t === "m" && y.t === "m") return push(OP.SELECT, "m", [c.v, x.v, y.v]);
        if (x.t === "i" && y.t === "i") return push(OP.SELECT, "i", [c.v, x.v, y.v]);
        return push(OP.SELECT, "f", [c.v, toF(x).v, toF(y).v]);
      }
      case "and":
      case "or": {
        const x = emit(a[0]!, pred);
        // `x && y` evaluates y only where x holds, `x || y` only where it does not.
        const y = emit(a[1]!, !hasReads(a[1]!) ? pred : e.op === "and" ? and(pred, x) : andNot(pred, x));
        return push(e.op === "and" ? OP.AND : OP.OR, "m", [x.v, y.v]);
      }
      case "not":
        return push(OP.NOT, "m", [emit(a[0]!, pred).v]);
      case "floor": {
        const x = emit(a[0]!, pred);
        return x.t === "i" ? x : push(OP.FFLOOR, "f", [x.v]);
      }
      case "mod": {
        const x = emit(a[0]!, pred);
        const y = emit(a[1]!, pred);
        const literalDivisor = typeof a[1] === "number" && isIntLiteral(a[1]) && a[1] !== 0;
        if (x.t === "i" && y.t === "i" && literalDivisor) return push(OP.IMOD, "i", [x.v, y.v]);
        return push(OP.FMOD, "f", [toF(x).v, toF(y).v]);
      }
      default:
        break;
    }
    const args = a.map((x) => emit(x, pred));
    const ints = args.every((x) => x.t === "i");
    // One instruction named after the op: I<OP> where it exists and every operand is an integer, else F<OP> on floats.
    if (!NAMED_OPS.has(e.op) && !COMPARISONS.has(e.op))
      throw new Error(`expr-program: no instruction for ${e.op} (known: ${Object.keys(EXPR_OPS).join(", ")})`);
    const name = e.op.toUpperCase();
    const iop = opcode(`I${name}`);
    const mask = COMPARISONS.has(e.op);
    if (ints && iop !== undefined)
      return push(
        iop,
        mask ? "m" : "i",
        args.map((x) => x.v),
      );
    return push(
      opcode(`F${name}`)!,
      mask ? "m" : "f",
      args.map((x) => toF(x).v),
    );
  };

  const s = src.scoreMod === null ? { v: SCORE, t: "f" as const } : toF(emit(src.scoreMod, SHOWN));
  const k = src.maskMod === null ? undefined : emit(src.maskMod, SHOWN);
  const d =
    src.derivative && src.scoreMod !== null ? toF(emit(derive(src.scoreMod, { kind: "score" }), SHOWN)) : undefined;
  const outputs = [s.v, k?.v, d?.v].filter((x): x is number => x !== undefined);
  markUniform(instrs, uniform, outputs);
  const { phys, registers } = allocate(instrs, outputs, fixed);
  return serialize(
    instrs,
    phys,
    registers,
    [phys(s.v), k === undefined ? -1 : phys(k.v), d === undefined ? -1 : phys(d.v)],
    ranks,
    sites,
  );
}

/**
 * Flags the instructions whose value is the same in every lane of a tile (literals, b, h, and operations of those only)
 * to run on one vector (UNIFORM), and of those the ones a per-lane instruction or the kernel reads to be copied across
 * the tile afterwards (SPLAT): ALiBi's slope chosen per head by a tree of `where` costs a few vector operations per tile,
 * not a few per element. A uniform read (GATHER_UNIFORM) already fills the whole tile.
 */
function markUniform(instrs: Instr[], uniform: ReadonlySet<number>, outputs: readonly number[]): void {
  const wide = new Set<number>(outputs);
  for (const ins of instrs)
    if (!uniform.has(ins.dst) || ins.op === OP.GATHER_UNIFORM || ins.op === OP.GATHER_ROW)
      for (const s of ins.srcs) wide.add(s);
  instrs.forEach((ins, n) => {
    if (!uniform.has(ins.dst) || ins.op === OP.GATHER_UNIFORM) return;
    instrs[n] = { ...ins, op: ins.op | UNIFORM_FLAG | (wide.has(ins.dst) ? SPLAT_FLAG : 0) };
  });
}

/**
 * Physical registers for the virtual ones, reused once a value's last reader has run (an instruction may write the
 * register one of its operands held: every operation reads a lane before it writes that lane). Registers 0 and 1 are
 * the kernel's; the outputs are kept to the end.
 */
function allocate(
  instrs: readonly Instr[],
  outputs: readonly number[],
  fixed: number,
): { phys: (v: number) => number; registers: number } {
  const last = new Map<number, number>();
  instrs.forEach((ins, n) => ins.srcs.forEach((s) => last.set(s, n)));
  for (const o of outputs) last.set(o, Infinity);
  // The kernel's registers keep their numbers (an element's may be reused once its last reader ran: it is reloaded
  // per tile).
  const map = new Map<number, number>(Array.from({ length: fixed }, (_, r) => [r, r]));
  const free: number[] = [];
  let registers = fixed;
  instrs.forEach((ins, n) => {
    for (const s of new Set(ins.srcs)) {
      if (s > SHOWN && last.get(s) === n) free.push(map.get(s)!);
    }
    free.sort((x, y) => y - x);
    const r = free.pop() ?? registers++;
    map.set(ins.dst, r);
    // A value nobody reads (possible after folding) frees its register at once.
    if (!last.has(ins.dst)) free.push(r);
  });
  return { phys: (v) => map.get(v)!, registers };
}

function serialize(
  instrs: readonly Instr[],
  phys: (v: number) => number,
  registers: number,
  outputs: readonly [number, number, number],
  ranks: ReadonlyMap<string, number>,
  sites: readonly ProgramSite[],
): ExprProgram {
  const isGather = (i: Instr) => i.op === OP.GATHER || i.op === OP.GATHER_UNIFORM || i.op === OP.GATHER_ROW;
  const lists = instrs.filter(isGather).reduce((n, i) => n + 2 * (i.srcs.length - 1), 0);
  let at = HEADER_WORDS + instrs.length * INSTR_WORDS + lists;
  const descriptors = new Map<string, { offset: number; rank: number }>();
  for (const [name, rank] of ranks) {
    descriptors.set(name, { offset: at, rank });
    at += 3 + 2 * rank;
  }
  const w = new Int32Array(at);
  w.set([instrs.length, registers, outputs[0], outputs[1], outputs[2], HEADER_WORDS]);
  let list = HEADER_WORDS + instrs.length * INSTR_WORDS;
  instrs.forEach((ins, n) => {
    const o = HEADER_WORDS + n * INSTR_WORDS;
    w[o] = ins.op;
    w[o + 1] = phys(ins.dst);
    if (isGather(ins)) {
      const [pred, ...index] = ins.srcs;
      w[o + 2] = descriptors.get(ins.input!)!.offset;
      w[o + 3] = phys(pred!);
      w[o + 4] = list;
      w[o + 5] = ins.site!;
      index.forEach((v, a) => {
        w[list + 2 * a] = phys(v);
        w[list + 2 * a + 1] = ins.floatIndex![a] ? 1 : 0;
      });
      list += 2 * index.length;
      return;
    }
    if ((ins.op & 0xff) === OP.CONST) w[o + 2] = ins.imm!;
    else {
      // Unary operations name their operand twice (the module reads a second register it ignores).
      const [a, b = a, c = a] = ins.srcs.map(phys);
      w[o + 2] = a ?? 0;
      w[o + 3] = b ?? 0;
      w[o + 4] = c ?? 0;
    }
  });
  return { words: w, registers, descriptors, sites };
}
