import { packageConfig } from "@attngraph/vitest-config";

// WebGPU without a GPU (the golden-models round trip runs on every executor): SwiftShader's Vulkan driver from
// Debian's chromium (`pnpm setup:system`). Set here, before the test workers start, since a worker does not see a
// value set inside a test file.
process.env["VK_ICD_FILENAMES"] ??= "/usr/lib/chromium/vk_swiftshader_icd.json";

export default packageConfig();
