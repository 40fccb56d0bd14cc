import { describe, expect, it } from "vitest";
import { type AdapterInfoLike, adapterName } from "./adapter-name.js";

const H200: AdapterInfoLike = {
  vendor: "nvidia",
  architecture: "",
  device: "nvidia-h200",
  description: "NVIDIA: 580.159.04 580.159.4.0",
};
const SWIFTSHADER: AdapterInfoLike = {
  vendor: "google",
  architecture: "swiftshader",
  device: "swiftshader-device-subzero-",
  description: "SwiftShader driver 5.0.0",
};

describe("adapterName", () => {
  it.each<[string, AdapterInfoLike | undefined, string]>([
    [
      "names the GPU model Dawn reports in `device` (an H200 on NVIDIA's Vulkan driver, as read on one)",
      H200,
      "nvidia-h200 (NVIDIA: 580.159.04 580.159.4.0)",
    ],
    [
      "names the GPU model Dawn reports in `device` (an AMD card)",
      { vendor: "amd", architecture: "rdna-3", device: "radeon rx 7900", description: "RADV" },
      "amd rdna-3 radeon rx 7900 (RADV)",
    ],
    [
      "leaves out a `device` that says nothing new: SwiftShader's id",
      SWIFTSHADER,
      "google swiftshader (SwiftShader driver 5.0.0)",
    ],
    [
      "leaves out a `device` that says nothing new: a bare PCI id",
      { vendor: "nvidia", architecture: "ampere", device: "0x2204", description: "" },
      "nvidia ampere",
    ],
    [
      "falls back to whatever is there: vendor and description",
      { vendor: "mesa", architecture: "", description: "llvmpipe (LLVM 15.0.6, 256 bits)" },
      "mesa (llvmpipe (LLVM 15.0.6, 256 bits))",
    ],
    ["falls back to whatever is there: the description alone", { description: "NVIDIA H200" }, "NVIDIA H200"],
    ["falls back to whatever is there: nothing", {}, "unknown adapter"],
    ["falls back to whatever is there: no info at all", undefined, "unknown adapter"],
  ])("%s", (_, info, want) => {
    expect(adapterName(info)).toBe(want);
  });
});
