import { packageConfig } from "@attngraph/vitest-config";

// One slow file: packing, an npm install from the registry, a Vite build and Chromium; under `pnpm test` the 2 cores
// are shared with every other package's tests.
export default packageConfig({ test: { testTimeout: 180_000, hookTimeout: 600_000, fileParallelism: false } });
