// An expression as one line of text for people (explain(), error messages): infix arithmetic and comparisons, calls for
// the rest, gathered reads as name[i, j]. Bounded: a long expression is cut with "…", never a multi-kilobyte line.
import { isInput, type Expr } from "./types.js";

const INFIX: Readonly<Record<string, string>> = {
  add: "+",
  sub: "−",
  mul: "·",
  div: "/",
  mod: "%",
  eq: "==",
  ne: "!=",
  lt: "<",
  le: "≤",
  gt: ">",
  ge: "≥",
  and: "and",
  or: "or",
};

/** `e` as text of at most `max` characters. */
export function formatExpr(e: Expr, max = 160): string {
  let budget = max + 1;
  const walk = (x: Expr, top: boolean): string => {
    if (budget <= 0) return "";
    let out: string;
    if (typeof x === "number" || typeof x === "string") out = String(x);
    else if (isInput(x)) out = `${x.name}[${x.index.map((i) => walk(i, true)).join(", ")}]`;
    else if (INFIX[x.op] !== undefined && x.args.length === 2) {
      const body = `${walk(x.args[0]!, false)} ${INFIX[x.op]} ${walk(x.args[1]!, false)}`;
      out = top ? body : `(${body})`;
    } else if (x.op === "neg") out = `−${walk(x.args[0]!, false)}`;
    else out = `${x.op}(${x.args.map((a) => walk(a, true)).join(", ")})`;
    budget -= out.length;
    return out;
  };
  const text = walk(e, true);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
