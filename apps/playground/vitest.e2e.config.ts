import { defineProject } from "vitest/config";

// The end-to-end test drives Debian's Chromium against the built page (dist/), so the package's `test` script runs
// `vite build` first. One file, generous timeouts: Chromium starts in a few seconds on 2 loaded cores.
export default defineProject({
  test: { include: ["e2e/**/*.e2e.test.ts"], testTimeout: 180_000, hookTimeout: 120_000, fileParallelism: false },
});
