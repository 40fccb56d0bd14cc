import { describe, expect, it } from "vitest";
import { adapterName } from "./adapter-name.js";

describe("adapterName", () => {
  it("names the GPU model Dawn reports in `device` (an H200 on NVIDIA's Vulkan driver, as read on one)", () => {
    expect(
      adapterName({
        vendor: "nvidia",
        architecture: "",
        device: "nvidia-h200",
        description: "NVIDIA: 580.159.04 580.159.4.0",
      }),
    ).toBe("nvidia-h200 (NVIDIA: 580.159.04 580.159.4.0)");
    expect(adapterName({ vendor: "amd", architecture: "rdna-3", device: "radeon rx 7900", description: "RADV" })).toBe(
      "amd rdna-3 radeon rx 7900 (RADV)",
    );
  });

  it("leaves out a `device` that says nothing new: SwiftShader's id, a bare PCI id", () => {
    expect(
      adapterName({
        vendor: "google",
        architecture: "swiftshader",
        device: "swiftshader-device-subzero-",
        description: "SwiftShader driver 5.0.0",
      }),
    ).toBe("google swiftshader (SwiftShader driver 5.0.0)");
    expect(adapterName({ vendor: "nvidia", architecture: "ampere", device: "0x2204", description: "" })).toBe(
      "nvidia ampere",
    );
  });

  it("falls back to whatever is there", () => {
    expect(adapterName({ vendor: "mesa", architecture: "", description: "llvmpipe (LLVM 15.0.6, 256 bits)" })).toBe(
      "mesa (llvmpipe (LLVM 15.0.6, 256 bits))",
    );
    expect(adapterName({ description: "NVIDIA H200" })).toBe("NVIDIA H200");
    expect(adapterName({})).toBe("unknown adapter");
    expect(adapterName(undefined)).toBe("unknown adapter");
  });
});
