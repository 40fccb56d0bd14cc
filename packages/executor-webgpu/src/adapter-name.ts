// A readable name for a WebGPU adapter, for `adapterDescription`, explain() and the bench's rows.

/** What a GPUAdapterInfo (`adapter.info`, `device.adapterInfo`) says of an adapter; older @webgpu/types lack fields. */
export interface AdapterInfoLike {
  readonly vendor?: string;
  readonly architecture?: string;
  readonly device?: string;
  readonly description?: string;
}

/**
 * "nvidia-h200 (NVIDIA: 580.159.04 580.159.4.0)", "google swiftshader (SwiftShader driver 5.0.0)".
 *
 * Dawn puts the GPU model in `device` ("nvidia-h200") and the driver in `description`, with `architecture` empty on
 * NVIDIA's Vulkan driver: without `device` an H200 reads "nvidia (NVIDIA: 580…)", which names no GPU. `device` is left
 * out where it says nothing new: SwiftShader's ("swiftshader-device-subzero-") repeats its architecture, and
 * browsers may give a bare PCI id ("0x2335").
 */
export function adapterName(info: AdapterInfoLike | undefined): string {
  const vendor = info?.vendor ?? "";
  const arch = info?.architecture ?? "";
  const device = info?.device ?? "";
  const description = info?.description ?? "";
  const low = (s: string) => s.toLowerCase();
  const deviceNames =
    device !== "" && !/^(0x)?[0-9a-f]+$/i.test(device) && !(arch !== "" && low(device).includes(low(arch)));
  // "nvidia-h200" already says "nvidia": the vendor is not repeated in front of it.
  const head = (
    deviceNames ? [vendor !== "" && low(device).startsWith(low(vendor)) ? "" : vendor, arch, device] : [vendor, arch]
  )
    .filter((s) => s !== "")
    .join(" ");
  return head && description ? `${head} (${description})` : head || description || "unknown adapter";
}
