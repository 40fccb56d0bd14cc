// onnxruntime's flex rows: the variant as plain ops (../onnx/flex-model.ts) on onnxruntime-web (wasm EP) or -node (CPU
// EP), loaded and configured as the other problems' ort rows are. Every variant materializes [b, H, T, T] (scores,
// scaled, masked, weights): a shape whose scores cannot fit is a row that says so, not an attempt that takes the wasm
// module (and every later session in the process) down with it.
import { freemem } from "node:os";
import { loadOrt } from "../impls/ort.js";
import { ONNX_INPUT, ONNX_OUTPUT } from "../onnx/attention-model.js";
import { buildFlexModel } from "../onnx/flex-model.js";
import { fmtBytes } from "../report.js";
import { FlexMemoryError } from "./attngraph.js";
import type { FlexProblem } from "./problem.js";
import type { FlexImpl, FlexRunner } from "./types.js";

/** onnxruntime-web's wasm32 heap. */
const WASM_MEMORY = 4 * 2 ** 30;

/** A floor for onnxruntime's working memory: four [b, H, T, T] float32 tensors (scores, scaled, masked, weights). */
export function ortFlexBytes(p: FlexProblem): number {
  const { b, t, h } = p.shape;
  return 4 * b * h * t * t * 4;
}

export function ortFlexImpl(runtime: "web" | "node"): FlexImpl {
  return {
    name: `ort-${runtime}`,
    family: "peer",
    async setup(p, c, options): Promise<FlexRunner> {
      const need = ortFlexBytes(p);
      const limit = runtime === "web" ? WASM_MEMORY : freemem();
      if (need > limit)
        throw new FlexMemoryError(
          `out of memory: its [b, H, T, T] tensors need about ${fmtBytes(need)}, over ${runtime === "web" ? "the 4 GiB of wasm memory" : `${fmtBytes(limit)} free`}`,
        );
      const { ort, sessionOptions, threads } = await loadOrt(runtime, options.threads);
      const session = await ort.InferenceSession.create(buildFlexModel(p, c.variant, c.part), sessionOptions);
      const { b, t, d, h } = p.shape;
      const heads = [b, h, t, d / h];
      const feeds =
        c.part === "core"
          ? {
              q: new ort.Tensor("float32", p.q, heads),
              k: new ort.Tensor("float32", p.k, heads),
              v: new ort.Tensor("float32", p.v, heads),
            }
          : { [ONNX_INPUT]: new ort.Tensor("float32", p.layer.x, [b, t, d]) };
      return {
        threads,
        async run() {
          const data = (await session.run(feeds, [ONNX_OUTPUT]))[ONNX_OUTPUT]?.data;
          if (!(data instanceof Float32Array)) throw new Error(`output ${ONNX_OUTPUT} is not float32 data on the CPU`);
          return data;
        },
        dispose: () => session.release(),
      };
    },
  };
}
