import { create, globals } from 'webgpu';
Object.assign(globalThis, globals);
const gpu = create([]);
const t0 = Date.now();
const adapter = await gpu.requestAdapter();
console.log('adapter', adapter && adapter.info, Date.now()-t0);
const device = await adapter.requestDevice({requiredLimits: {}});
device.lost.then(i => console.log('LOST', i.reason, i.message));
const code = `@group(0) @binding(0) var<storage, read_write> a: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) { if (g.x < arrayLength(&a)) { a[g.x] = a[g.x] * 2.0; } }`;
let t=Date.now();
const pipe = device.createComputePipeline({layout:'auto', compute:{module: device.createShaderModule({code}), entryPoint:'main'}});
console.log('pipeline ms', Date.now()-t);
const buf = device.createBuffer({size: 16, usage: GPUBufferUsage.STORAGE|GPUBufferUsage.COPY_SRC|GPUBufferUsage.COPY_DST});
device.queue.writeBuffer(buf, 0, new Float32Array([1,2,3,4]));
const rb = device.createBuffer({size:16, usage: GPUBufferUsage.MAP_READ|GPUBufferUsage.COPY_DST});
const enc = device.createCommandEncoder();
const p = enc.beginComputePass(); p.setPipeline(pipe); p.setBindGroup(0, device.createBindGroup({layout: pipe.getBindGroupLayout(0), entries:[{binding:0, resource:{buffer:buf}}]})); p.dispatchWorkgroups(1); p.end();
enc.copyBufferToBuffer(buf,0,rb,0,16);
device.queue.submit([enc.finish()]);
await rb.mapAsync(GPUMapMode.READ);
console.log(new Float32Array(rb.getMappedRange().slice(0)));
rb.unmap();
// validation error scope
device.pushErrorScope('validation');
device.createBuffer({size: 3, usage: GPUBufferUsage.MAP_READ|GPUBufferUsage.STORAGE});
const err = await device.popErrorScope();
console.log('scope err:', err && err.message.slice(0,200));
// destroy
device.destroy();
console.log('destroyed');
await new Promise(r=>setTimeout(r,100));
device.pushErrorScope('validation');
const b2 = device.createBuffer({size: 16, usage: GPUBufferUsage.MAP_READ|GPUBufferUsage.COPY_DST});
const e2 = await device.popErrorScope();
console.log('after destroy scope', e2);
try { await b2.mapAsync(GPUMapMode.READ); console.log('mapped?!') } catch(e) { console.log('map err', e.name, e.message) }
console.log('done');
