import type { LayerNormAttrs } from "@attngraph/graph";
import type { OpLowering } from "../lowering.js";
import { layerNormalization } from "./layer-norm-math.js";

/** layer-norm: nn.LayerNorm over the last axis, as LayerNormalization (opset 17). */
export const layerNorm: OpLowering = (l) =>
  layerNormalization(
    l,
    l.required("x"),
    l.input("weight"),
    l.input("bias"),
    (l.node.attrs as unknown as LayerNormAttrs).eps,
  );
