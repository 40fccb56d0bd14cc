// Holds the hand-written `KernelExports` (src/module.ts) to the AssemblyScript source: every function that
// assembly/index.ts re-exports (or defines) must be declared there with the same parameters, in number and in kind
// (i32/u32/usize/f32/f64/bool → number, i64/u64 → bigint), and the same result; and no export may take more than
// MAX_PARAMS parameters (a longer list goes into a params block written by field name, as the fused attention's).
// The generated pointwise ops (`export *` from ./generated/pointwise) are looked up by name, not declared, and left out.
import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const MAX_PARAMS = 8;

const root = (rel: string): string => fileURLToPath(new URL(`../${rel}`, import.meta.url));
const read = (rel: string): string => readFileSync(root(rel), "utf8");

interface Signature {
  readonly params: readonly { readonly name: string; readonly type: string }[];
  readonly result: string;
}

/** Drops comments, so a commented-out signature is no signature. */
function stripComments(src: string): string {
  return src.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/[^\n]*/g, "");
}

/** `a: T, b: U` → [{a, T}, {b, U}] (no default values or nested generics in these lists). */
function parseParams(list: string): { name: string; type: string }[] {
  return list
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "")
    .map((p) => {
      const m = /^(\w+)\s*:\s*(.+)$/.exec(p);
      if (m === null) throw new Error(`cannot read parameter "${p}"`);
      return { name: m[1]!, type: m[2]!.trim() };
    });
}

/** Every `export function name(params): result` of an AssemblyScript file. */
function asFunctions(src: string): Map<string, Signature> {
  const out = new Map<string, Signature>();
  const re = /export\s+function\s+(\w+)\s*\(([^)]*)\)\s*:\s*([\w<>]+)/g;
  for (const m of stripComments(src).matchAll(re)) out.set(m[1]!, { params: parseParams(m[2]!), result: m[3]! });
  return out;
}

/** The module's exported functions: index.ts's named re-exports, looked up in their files, and its own. */
function moduleExports(): Map<string, Signature> {
  const index = stripComments(read("assembly/index.ts"));
  const out = new Map<string, Signature>(asFunctions(index));
  for (const m of index.matchAll(/export\s*\{([^}]*)\}\s*from\s*"\.\/([\w/-]+)"/g)) {
    const file = asFunctions(read(`assembly/${m[2]}.ts`));
    for (const name of m[1]!
      .split(",")
      .map((n) => n.trim())
      .filter((n) => n !== "")) {
      const sig = file.get(name);
      if (sig === undefined) throw new Error(`assembly/${m[2]}.ts exports no function ${name}`);
      out.set(name, sig);
    }
  }
  return out;
}

/**
 * The members of `interface KernelExports { … }` in src/module.ts: methods `name(params): result;`, and properties
 * `name: Alias;` of a function type declared in the same file (`export type Alias = (params) => result;`).
 */
function declaredExports(): Map<string, Signature> {
  const src = stripComments(read("src/module.ts"));
  const start = src.indexOf("export interface KernelExports {");
  if (start < 0) throw new Error("src/module.ts declares no KernelExports");
  let depth = 0,
    end = start;
  for (let i = src.indexOf("{", start); i < src.length; i++) {
    if (src[i] === "{") depth++;
    else if (src[i] === "}" && --depth === 0) {
      end = i;
      break;
    }
  }
  const body = src.slice(src.indexOf("{", start) + 1, end);
  const out = new Map<string, Signature>();
  for (const m of body.matchAll(/(\w+)\s*\(([^)]*)\)\s*:\s*(\w+)\s*;/g))
    out.set(m[1]!, { params: parseParams(m[2]!), result: m[3]! });
  const aliases = new Map<string, Signature>();
  for (const m of src.matchAll(/export\s+type\s+(\w+)\s*=\s*\(([^)]*)\)\s*=>\s*(\w+)\s*;/g))
    aliases.set(m[1]!, { params: parseParams(m[2]!), result: m[3]! });
  for (const m of body.matchAll(/(\w+)\s*:\s*(\w+)\s*;/g)) {
    const sig = aliases.get(m[2]!);
    if (sig === undefined) throw new Error(`KernelExports.${m[1]} has type ${m[2]}, no function type of src/module.ts`);
    out.set(m[1]!, sig);
  }
  return out;
}

/** Names of the `@unmanaged` classes of assembly/*.ts: a parameter of such a type is a pointer (usize). */
const UNMANAGED: ReadonlySet<string> = new Set(
  readdirSync(root("assembly"))
    .filter((f) => f.endsWith(".ts"))
    .flatMap((f) =>
      [...stripComments(read(`assembly/${f}`)).matchAll(/@unmanaged\s+(?:export\s+)?class\s+(\w+)/g)].map((m) => m[1]!),
    ),
);

/** The JavaScript type a wasm value of AssemblyScript type `t` crosses the boundary as. */
function jsType(t: string): string {
  if (t === "void") return "void";
  if (UNMANAGED.has(t)) return "number";
  if (/^(i64|u64)$/.test(t)) return "bigint";
  if (/^(i8|u8|i16|u16|i32|u32|isize|usize|f32|f64|bool)$/.test(t)) return "number";
  throw new Error(`no JavaScript type for AssemblyScript type ${t}`);
}

describe("KernelExports against assembly/", () => {
  const module = moduleExports();
  const declared = declaredExports();

  it("reads a plausible number of exports", () => {
    expect(module.size).toBeGreaterThan(40);
    expect(declared.size).toBeGreaterThan(40);
  });

  it("declares every export of the module, and nothing else", () => {
    expect([...declared.keys()].sort()).toEqual([...module.keys()].sort());
  });

  it("declares each export with the module's parameter count, types and result", () => {
    const mismatches: string[] = [];
    for (const [name, sig] of module) {
      const d = declared.get(name);
      if (d === undefined) continue;
      const want = `${sig.params.map((p) => jsType(p.type)).join(", ")} → ${jsType(sig.result)}`;
      const got = `${d.params.map((p) => p.type).join(", ")} → ${d.result}`;
      if (want !== got) mismatches.push(`${name}: module (${want}), declared (${got})`);
    }
    expect(mismatches).toEqual([]);
  });

  it(`has no export with more than ${MAX_PARAMS} parameters (but those still listed)`, () => {
    const wide = [...module]
      .filter(([, sig]) => sig.params.length > MAX_PARAMS)
      .map(([name]) => name)
      .sort();
    expect(wide, "exports taking more than MAX_PARAMS parameters (a params block instead)").toEqual([]);
  });
});
