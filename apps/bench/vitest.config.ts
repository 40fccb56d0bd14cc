import { packageConfig } from "@attngraph/vitest-config";

// The WebGPU peers' tests (src/impls/webgpu-peers.test.ts) run on SwiftShader, a CPU Vulkan driver, where there is no
// GPU (CI): Dawn finds it through VK_ICD_FILENAMES. The npm script sets it; here it only gets a default for a bare
// `vitest run` (set before the test processes start: they inherit it).
process.env["VK_ICD_FILENAMES"] ??= "/usr/lib/chromium/vk_swiftshader_icd.json";

export default packageConfig();
