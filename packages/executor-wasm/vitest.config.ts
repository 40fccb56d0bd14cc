// No flags: "auto" picks whatever this engine validates (plain SIMD on Node 20, relaxed SIMD on Node 22+), and
// src/flavour.test.ts checks the pick against WebAssembly.validate. The relaxed flavour's own suite runs under
// vitest.relaxed.config.ts, which turns relaxed SIMD on for Node 20 too.
import { packageConfig } from "@attngraph/vitest-config";
export default packageConfig({ test: { exclude: ["src/**/*.relaxed.test.ts", "**/node_modules/**"] } });
