import { packageConfig } from "@attngraph/vitest-config";

// SwiftShader (a CPU Vulkan driver) compiles each pipeline in about half a second and runs slowly: generous timeouts,
// and files one at a time so two Dawn instances do not compete for the 2 cores. VK_ICD_FILENAMES is set by the npm
// script (workers do not see a value set inside a test file); here it only gets a default for a bare `vitest run`.
process.env["VK_ICD_FILENAMES"] ??= "/usr/lib/chromium/vk_swiftshader_icd.json";

export default packageConfig({
  test: { testTimeout: 120_000, hookTimeout: 120_000, fileParallelism: false },
});
