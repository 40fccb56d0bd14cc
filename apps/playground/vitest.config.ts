import { packageConfig } from "@attngraph/vitest-config";

// Unit tests of the pure parts (src/**/*.test.ts). The browser test has its own config: vitest.e2e.config.ts.
export default packageConfig();
