import { create, globals } from 'webgpu';
const gpu = create([]);
const adapter = await gpu.requestAdapter();
console.log(adapter.info.vendor, adapter.info.architecture, adapter.info.description, adapter.features.has('shader-f16'), adapter.limits.maxComputeWorkgroupStorageSize, adapter.limits.maxStorageBuffersPerShaderStage);
const device = await adapter.requestDevice();
console.log('have device; exiting without destroy');
