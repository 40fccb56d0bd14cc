// Every package runs its own `vitest run` (that is what turbo calls), so each needs a config of its own; without one,
// vitest walks up to a root config and resolves its globs relative to the package. This is the one shape they share.
import { defineProject, mergeConfig } from "vitest/config";

/** @param {import("vitest/config").UserProjectConfigExport} [extra] */
export function packageConfig(extra = {}) {
  return mergeConfig(
    defineProject({
      // Resolve workspace packages to their TypeScript source, so a test never runs against a stale dist/. Tests run in
      // vitest's node (SSR) environment, which takes its conditions from `ssr.resolve`, not `resolve`.
      resolve: { conditions: ["@attngraph/source"] },
      ssr: { resolve: { conditions: ["@attngraph/source"] } },
      test: { include: ["src/**/*.test.ts"], testTimeout: 20_000 },
    }),
    extra,
  );
}
