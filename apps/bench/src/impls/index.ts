// Every implementation the harness knows, in table order: the attngraph executors first, then the peers. Those marked
// onlyWhenNamed (tfjs-webgpu, ort-webgpu, the stock-gradient and contrib-op variants, the imported ONNX rows) run only
// when named in --impl.
import { attngraphExecutors, attngraphImpl } from "./attngraph.js";
import { importedImpl } from "./attngraph-onnx.js";
import { ortImpl, ortNodeImpl, ortWebGpuImpl, ortWebImpl } from "./ort.js";
import { tfjsImpl } from "./tfjs.js";
import type { Impl } from "./types.js";

export function allImpls(): Impl[] {
  return [
    ...Object.keys(attngraphExecutors).map(attngraphImpl),
    importedImpl("wasm"),
    importedImpl("cpu"),
    tfjsImpl("cpu"),
    tfjsImpl("wasm"),
    tfjsImpl("webgpu"),
    tfjsImpl("cpu", "stock"),
    tfjsImpl("wasm", "stock"),
    ortWebImpl,
    ortNodeImpl,
    ortWebGpuImpl,
    ortImpl("web", "mha"),
    ortImpl("node", "mha"),
    ortImpl("web", "export"),
    ortImpl("node", "export"),
  ];
}
