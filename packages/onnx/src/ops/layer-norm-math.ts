// LayerNormalization (default domain from opset 17) over the last axis, shared by layer-norm and add-layer-norm.
// ONNX requires the scale input; attngraph's weight is optional (elementwise_affine=False), so a missing one is ones.
import type { Lowering } from "../lowering.js";

/** x [..., E] → (x − mean) / sqrt(var + eps) · weight + bias, biased variance. */
export function layerNormalization(
  l: Lowering,
  x: string,
  weight: string | undefined,
  bias: string | undefined,
  eps: number,
): string {
  const scale = weight ?? ones(l, x);
  return l.emit("LayerNormalization", [x, scale, ...(bias === undefined ? [] : [bias])], {
    axis: -1,
    epsilon: { float: eps },
  });
}

/** Ones [E] for x [..., E] (E read at run time when symbolic). */
function ones(l: Lowering, x: string): string {
  return l.emit("Expand", [l.constant("float", [1], []), l.shape([{ of: x, axis: -1 }])]);
}
