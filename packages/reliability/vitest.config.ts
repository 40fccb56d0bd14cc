import { packageConfig } from "@attngraph/vitest-config";

// WebGPU without a GPU: SwiftShader's Vulkan driver from Debian's chromium (`pnpm setup:system`). Set here, before the
// test workers start, since a worker does not see a value set inside a test file.
process.env["VK_ICD_FILENAMES"] ??= "/usr/lib/chromium/vk_swiftshader_icd.json";

// testTimeout is a hang guard, not a speed check: webgpu runs on a software adapter, and CI runs every package's tests at
// once on 2 cores, where one webgpu property test has taken 40 s.
// --expose-gc lets the soak test collect before each heap reading, so it measures what is retained, not what is
// merely not yet collected.
export default packageConfig({ test: { execArgv: ["--expose-gc"], testTimeout: 300_000 } });
