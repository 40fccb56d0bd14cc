import { GraphValidationError, show } from "./errors.js";
import type { AnyOpDef, OpDef } from "./op-def.js";
import { builtinOps } from "./ops/index.js";

/** The op kinds a graph may use. Built-ins come from one explicit list; user ops are added with `register`. */
export class OpRegistry {
  readonly #ops = new Map<string, AnyOpDef>();

  constructor(ops: readonly AnyOpDef[] = []) {
    for (const op of ops) this.register(op);
  }

  /** Adds an op kind. A second op of the same kind is an error naming both. */
  register<A extends object>(op: OpDef<A>): this {
    const existing = this.#ops.get(op.kind);
    if (existing) {
      throw new GraphValidationError(
        `op ${op.kind}`,
        "op kind registered twice",
        "one declaration per kind",
        `"${existing.doc}" and "${op.doc}"`,
        "duplicate-op",
      );
    }
    this.#ops.set(op.kind, op as unknown as AnyOpDef);
    return this;
  }

  has(kind: string): boolean {
    return this.#ops.has(kind);
  }

  /** The op's declaration; an unknown kind is an error naming the node that asked. */
  get(kind: string, node = "graph"): AnyOpDef {
    const op = this.#ops.get(kind);
    if (!op) {
      // show(): the kind may come from an untrusted document; a 10 kB kind must not make a 20 kB message.
      throw new GraphValidationError(
        node,
        `unknown op kind ${show(kind)}`,
        `one of ${[...this.#ops.keys()].join(", ")}`,
        show(kind),
        "unknown-op",
      );
    }
    return op;
  }

  kinds(): string[] {
    return [...this.#ops.keys()];
  }
}

/** A registry holding the built-in op kinds plus any given ones. */
export function createOpRegistry(extra: readonly AnyOpDef[] = []): OpRegistry {
  return new OpRegistry([...builtinOps, ...extra]);
}

/**
 * The op kinds an executor implements as kernels: every built-in op but those declared by their elementwise expression
 * (silu, …), which the scheduler lowers to the one "pointwise" kernel.
 */
export function kernelKinds(ops: readonly AnyOpDef[] = builtinOps): string[] {
  return ops.filter((op) => op.pointwise === undefined).map((op) => op.kind);
}
