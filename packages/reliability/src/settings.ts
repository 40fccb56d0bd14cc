// Run lengths and seeds, fixed for CI and overridable from the environment to explore more locally:
//   ATTNGRAPH_FC_SEED=123 ATTNGRAPH_FC_RUNS=2000 pnpm --filter @attngraph/reliability test
//   ATTNGRAPH_SOAK_RUNS=10000 pnpm soak

/** The seed every property uses unless ATTNGRAPH_FC_SEED says otherwise (CI never sets it). */
export const DEFAULT_FC_SEED = 0x5eed;

/**
 * fast-check parameters: the fixed seed (or ATTNGRAPH_FC_SEED), `defaultRuns` cases (or ATTNGRAPH_FC_RUNS), and the
 * property's own error message (config, tensor, worst element) inside the report beside the shrunk counterexample.
 */
export function fcSettings(defaultRuns: number): { seed: number; numRuns: number; includeErrorInReport: true } {
  return {
    seed: intFromEnv("ATTNGRAPH_FC_SEED") ?? DEFAULT_FC_SEED,
    numRuns: intFromEnv("ATTNGRAPH_FC_RUNS") ?? defaultRuns,
    includeErrorInReport: true,
  };
}

/** Runs per executor and tap mode of the soak: ATTNGRAPH_SOAK_RUNS, else `defaultRuns`. */
export function soakRuns(defaultRuns: number): number {
  return intFromEnv("ATTNGRAPH_SOAK_RUNS") ?? defaultRuns;
}

function intFromEnv(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return undefined;
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) throw new Error(`${name}: expected an integer, got ${JSON.stringify(raw)}`);
  return n;
}
