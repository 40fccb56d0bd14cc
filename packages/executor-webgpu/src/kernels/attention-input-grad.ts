// attention-grad wrt a gathered input of the modifications (a learnable bias table, per-head temperatures): read back
// to the host and computed by @attngraph/graph's shared loop (attentionInputGrad), as the unfused score-mod-input-grad
// is on this executor. A scatter of float sums into the input's elements has no atomic float add in WGSL; the gradient
// of a gathered input is small and taken once per training step.
import { attentionInputGrad, gatheredOfCall, type AttentionGradAttrs, type F32View } from "@attngraph/graph";
import type { KernelContext } from "../executor.js";
import type { GpuTensor } from "../gpu-tensor.js";
import { optionalInput, type Call } from "./inputs.js";
import { hostGathered } from "./expr-host.js";

type Inputs = Record<"q" | "k" | "v" | "out" | "grad" | "lse", GpuTensor> & { readonly pad: GpuTensor | undefined };

export async function gatheredInputGrad(
  call: Call,
  gpu: KernelContext,
  x: Inputs,
  attrs: AttentionGradAttrs,
): Promise<GpuTensor> {
  const gathered = gatheredOfCall(call, 7, (slot) => optionalInput(call, slot));
  // The declaration's rule made wrt a slot among the gathered inputs, and gatheredOfCall has each of them.
  const target = gathered.get(attrs.inputs![Number(attrs.wrt.slice(1))]!)!;
  const host = async (t: GpuTensor): Promise<F32View> => {
    const h = (await gpu.hostValues(t)).contiguous();
    return { data: h.toFloat32Array(), shape: h.shape, strides: h.strides, offset: 0 };
  };
  const views = {
    q: await host(x.q),
    k: await host(x.k),
    v: await host(x.v),
    out: await host(x.out),
    grad: await host(x.grad),
    lse: await host(x.lse),
    pad: x.pad && (await host(x.pad)),
  };
  const y = attentionInputGrad(views, attrs, await hostGathered(gpu, gathered), call.node);
  const out = gpu.alloc(target.shape);
  if (out.size > 0) gpu.device.queue.writeBuffer(out.storage.buffer, 0, y);
  return out;
}
