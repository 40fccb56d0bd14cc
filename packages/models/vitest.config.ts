import { packageConfig } from "@attngraph/vitest-config";

// generate()'s tests run on webgpu too: SwiftShader's Vulkan driver from Debian's chromium (`pnpm setup:system`), set
// before the test workers start (a worker does not see a value set inside a test file). Its pipelines compile on the
// CPU, so the timeout is a hang guard, not a speed check.
process.env["VK_ICD_FILENAMES"] ??= "/usr/lib/chromium/vk_swiftshader_icd.json";

export default packageConfig({ test: { testTimeout: 120_000 } });
