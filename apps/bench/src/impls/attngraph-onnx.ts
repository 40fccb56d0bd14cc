// attngraph running the very ONNX file onnxruntime runs: the attention or block model of ../onnx (what `ort-web` and
// `ort-node` load) imported by importOnnx and compiled on an attngraph executor (`wasm-onnx`, `cpu-onnx`, run when
// named). Beside `wasm` (the graph attngraph's own builders make), the row shows what an imported model costs: the
// import turns the file's MatMul/Where/Softmax chain into the same fused attention, so the two should be close.
import { importOnnx } from "@attngraph/onnx";
import { compile } from "@attngraph/runtime";
import { Tensor } from "@attngraph/tensor";
import type { BenchProblem, ProblemKind } from "../problem.js";
import {
  attngraphExecutors,
  plannedPeakBytes,
  sessionStreams,
  type AttngraphImpl,
  type AttngraphRunner,
} from "./attngraph.js";
import { buildModel, modelFeeds } from "./ort.js";
import type { SetupOptions } from "./types.js";

const FORWARD_ONLY = "the attention and block problems only (the ONNX file onnxruntime runs, imported)";

export function importedImpl(executorName: "wasm" | "cpu"): AttngraphImpl {
  const make = attngraphExecutors[executorName]!;
  return {
    name: `${executorName}-onnx`,
    family: "attngraph",
    onlyWhenNamed: true,
    unsupported: (kind: ProblemKind) => (kind === "attention" || kind === "block" ? undefined : FORWARD_ONLY),
    async setup(p: BenchProblem, options: SetupOptions): Promise<AttngraphRunner> {
      if (p.kind !== "attention" && p.kind !== "block") throw new Error(FORWARD_ONLY);
      const feeds = modelFeeds(p);
      const imported = importOnnx(buildModel(p), {
        shapes: Object.fromEntries(Object.entries(feeds).map(([k, v]) => [k, v.dims])),
      });
      const executor = await make(options);
      const session = await compile(imported.graph, { executors: [executor], weights: imported.weights });
      const inputs = Object.fromEntries(Object.entries(feeds).map(([k, v]) => [k, new Tensor(v.data, v.dims)]));
      const outName = imported.outputs[0]!;
      const threads = (executor as { threading?: { threads: number } }).threading?.threads ?? 1;
      let seen = 0;
      return {
        threads,
        async run() {
          const out = (await session.run(inputs))[outName]!.contiguous();
          return out.data.subarray(out.offset, out.offset + out.size);
        },
        streams: sessionStreams(session, (n) => void (seen += n)),
        plannedPeakBytes: plannedPeakBytes(
          session,
          Object.fromEntries(Object.entries(inputs).map(([k, t]) => [k, t.shape])),
        ),
        observed: () => seen,
        dispose: () => session.dispose(),
      };
    },
  };
}
