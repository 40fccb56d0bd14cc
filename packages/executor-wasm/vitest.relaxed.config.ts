// The relaxed-SIMD flavour: Node 20 needs --experimental-wasm-relaxed-simd, which NODE_OPTIONS refuses, so the test
// workers get it through execArgv (vitest's default forks pool). Only the *.relaxed.test.ts files run here (the shared
// config's include is replaced, not merged).
import { packageConfig } from "@attngraph/vitest-config";

const config = packageConfig({ test: { execArgv: ["--experimental-wasm-relaxed-simd"] } });
export default { ...config, test: { ...config.test, include: ["src/**/*.relaxed.test.ts"] } };
