// `--ops <module>`: a user's own op kinds and kernels for `diff` and `run`, so a user op can be diffed across executors
// and its repro replayed from the command line. The module (ES module, loaded by import()) exports
//   ops:     OpDef[]                                    (defineOp results: the kinds its graphs use)
//   kernels: { cpu?: { kind: kernel }, wasm?: {...}, webgpu?: {...} }   (registered on each executor the CLI makes)
import { createOpRegistry, type AnyOpDef, type Executor, type OpRegistry } from "@attngraph/graph";
import { clip, describe } from "@attngraph/tensor";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { UsageError } from "./io.js";

export interface UserOps {
  readonly registry: OpRegistry;
  /** Executor name → op kind → kernel. */
  readonly kernels: ReadonlyMap<string, ReadonlyMap<string, unknown>>;
}

const EXECUTORS = ["cpu", "wasm", "webgpu"];

export async function loadUserOps(file: string): Promise<UserOps> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(resolve(file)).href)) as Record<string, unknown>;
  } catch (e) {
    throw new UsageError(
      `--ops ${clip(file)}: cannot load the module: ${clip(e instanceof Error ? e.message : String(e), 300)}`,
    );
  }
  const ops = mod["ops"] ?? [];
  if (!Array.isArray(ops))
    throw new UsageError(`--ops ${clip(file)}: "ops" must be an array of defineOp() results, got ${typeof ops}`);
  const kernels = new Map<string, Map<string, unknown>>();
  const given = mod["kernels"] ?? {};
  if (typeof given !== "object" || given === null)
    throw new UsageError(`--ops ${clip(file)}: "kernels" must be { executor: { kind: kernel } }, got ${typeof given}`);
  for (const [executor, byKind] of Object.entries(given)) {
    if (!EXECUTORS.includes(executor))
      throw new UsageError(
        `--ops ${clip(file)}: kernels for unknown executor "${clip(executor)}"; known: ${EXECUTORS.join(", ")}`,
      );
    if (typeof byKind !== "object" || byKind === null)
      throw new UsageError(`--ops ${clip(file)}: kernels.${executor} must be { kind: kernel }`);
    kernels.set(executor, new Map(Object.entries(byKind)));
  }
  // A module with no op and no kernel (a typo such as `op`, or everything under `default`) would be taken and do nothing.
  if (ops.length === 0 && ![...kernels.values()].some((byKind) => byKind.size > 0)) {
    const exported = Object.keys(mod).sort();
    throw new UsageError(
      describe(
        `--ops ${clip(file)}`,
        "exports no op and no kernel",
        `"ops" (an array of defineOp() results) or "kernels" ({ executor: { kind: kernel } })`,
        exported.length ? `exports ${clip(exported.join(", "))}` : "no exports",
      ),
    );
  }
  // createOpRegistry checks the definitions (a kind twice, a built-in kind redefined): its error names the kind.
  return { registry: createOpRegistry(ops as AnyOpDef[]), kernels };
}

/** Registers the module's kernels for `executor` (by its name) on it. */
export function registerUserKernels(executor: Executor, ops: UserOps | undefined): Executor {
  for (const [kind, kernel] of ops?.kernels.get(executor.name) ?? []) executor.registerKernel(kind, kernel);
  return executor;
}
