// Runs one WGSL compute entry on the executor's device, outside any kernel: how the tests measure a WGSL function (the
// dropout generator, erf) against its TypeScript or float64 counterpart, element by element.
import type { WebGpuExecutor } from "./executor.js";

/**
 * Runs `code`'s `main` (@workgroup_size(64)) over `n` invocations, with `input` at binding 0 (read-only storage) and an
 * `outBytes` storage buffer at binding 1, and returns that buffer's bytes.
 */
export async function runWgsl(
  webgpu: WebGpuExecutor,
  code: string,
  input: ArrayBufferView<ArrayBuffer>,
  outBytes: number,
  n: number,
): Promise<ArrayBuffer> {
  await webgpu.init();
  const device = webgpu.device!;
  const pipeline = await device.createComputePipelineAsync({
    layout: "auto",
    compute: { module: device.createShaderModule({ code }), entryPoint: "main" },
  });
  // GPUBufferUsage / GPUMapMode values as numbers: Node has no such globals (see buffers.ts).
  const [MAP_READ, COPY_SRC, COPY_DST, STORAGE] = [0x1, 0x4, 0x8, 0x80];
  const inBuffer = device.createBuffer({ size: input.byteLength, usage: STORAGE | COPY_DST });
  const output = device.createBuffer({ size: outBytes, usage: STORAGE | COPY_SRC });
  const read = device.createBuffer({ size: outBytes, usage: MAP_READ | COPY_DST });
  try {
    device.queue.writeBuffer(inBuffer, 0, input);
    const bindGroup = device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: [
        { binding: 0, resource: { buffer: inBuffer } },
        { binding: 1, resource: { buffer: output } },
      ],
    });
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bindGroup);
    pass.dispatchWorkgroups(Math.ceil(n / 64));
    pass.end();
    encoder.copyBufferToBuffer(output, 0, read, 0, outBytes);
    device.queue.submit([encoder.finish()]);
    await read.mapAsync(MAP_READ);
    return read.getMappedRange().slice(0);
  } finally {
    for (const b of [inBuffer, output, read]) b.destroy();
  }
}
