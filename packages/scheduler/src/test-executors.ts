// Executors for scheduler tests: they answer `supports` from a list and never run anything.
import type { Executor } from "@attngraph/graph";

/** "all": every op but the fused `attention` (so the unfused chain stays); "fused": every op including it. */
export function fakeExecutor(
  name: string,
  supported: readonly string[] | "all" | "fused",
  refuse: Record<string, string> = {},
): Executor {
  return {
    specVersion: 1,
    name,
    supports: (kind) =>
      refuse[kind]
        ? { ok: false, reason: refuse[kind] }
        : supported === "fused" ||
            (supported === "all" && kind !== "attention") ||
            (Array.isArray(supported) && supported.includes(kind))
          ? { ok: true }
          : { ok: false, reason: `no kernel for op ${kind}` },
    registerKernel: () => {},
    upload: (t) => t,
    download: (v) => v as never,
    dispatch: () => {
      throw new Error("fake executor: not for running");
    },
  };
}
