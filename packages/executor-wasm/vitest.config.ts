// Node 20 without --experimental-wasm-relaxed-simd: WebAssembly.validate rejects the relaxed module, so these tests
// run the plain SIMD flavour (and check that the fallback picked it). The relaxed flavour runs under
// vitest.relaxed.config.ts with the flag.
import { packageConfig } from "@attngraph/vitest-config";
export default packageConfig({ test: { exclude: ["src/**/*.relaxed.test.ts", "**/node_modules/**"] } });
