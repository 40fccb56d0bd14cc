import type { OpLowering } from "../lowering.js";

/**
 * kv-append: the present positions, past ++ this call's, [B, Hkv, P + L, D]. The export has made the cache weight a
 * model input holding the past positions (decode-caches.ts), so the cache slot reads exactly those P positions: the
 * session's write into a preallocated cache becomes a Concat on the sequence axis.
 */
export const kvAppend: OpLowering = (l) => l.emit("Concat", [l.required("cache"), l.required("x")], { axis: 2 });
