// A wrong kernel on purpose, to prove a check can fail: an executor that behaves as `base` except that every result of
// op `kind` comes back with `delta` added to its first element (the kind of slip a new kernel makes). Works for any
// executor: the result is read back, edited and uploaded again (the original result is not released: a test helper).
import type { Executor, KernelCall } from "@attngraph/graph";

// biome-ignore lint/suspicious/noExplicitAny: any executor, whatever its value type
export function withPlantedError(base: Executor<any>, kind: string, delta: number, name = "mutant"): Executor<any> {
  return {
    specVersion: 1,
    name,
    supports: (k, a) => base.supports(k, a),
    registerKernel: (k, kernel) => base.registerKernel(k, kernel),
    upload: (t) => base.upload(t),
    download: (v) => base.download(v),
    ...(base.release ? { release: (v: unknown) => base.release!(v) } : {}),
    ...(base.init ? { init: () => base.init!() } : {}),
    async dispatch(call: KernelCall<unknown>) {
      const out = await base.dispatch(call);
      if (call.kind !== kind) return out;
      const t = (await base.download(out)).clone();
      if (t.size === 0) return out;
      t.data[0]! += delta;
      return base.upload(t);
    },
  };
}
