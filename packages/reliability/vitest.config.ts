import { packageConfig } from "@attngraph/vitest-config";

// --expose-gc lets the soak test collect before each heap reading, so it measures what is retained, not what is
// merely not yet collected.
export default packageConfig({ test: { execArgv: ["--expose-gc"], testTimeout: 60_000 } });
