// Op kind → lowering, one explicit table (nothing registers itself on import). A built-in kind missing here (the
// backward and optimizer ops) fails the export naming the node; so does a user op.
import type { OpLowering } from "../lowering.js";
import { add } from "./add.js";
import { addLayerNorm } from "./add-layer-norm.js";
import { alibi } from "./alibi.js";
import { attention } from "./attention.js";
import { crossEntropy } from "./cross-entropy.js";
import { dropout } from "./dropout.js";
import { embedding } from "./embedding.js";
import { gelu } from "./gelu.js";
import { kvAppend } from "./kv-append.js";
import { layerNorm } from "./layer-norm.js";
import { linearGelu } from "./linear-gelu.js";
import { mask } from "./mask.js";
import { outProj } from "./out-proj.js";
import { pad } from "./pad.js";
import { positionEmbedding } from "./position-embedding.js";
import { projection } from "./projection.js";
import { relu } from "./relu.js";
import { mul } from "./mul.js";
import { rmsNorm } from "./rms-norm.js";
import { pointwise } from "./pointwise.js";
import { reshape } from "./reshape.js";
import { rope } from "./rope.js";
import { score } from "./score.js";
import { maskMod, scoreMod } from "./score-mod.js";
import { slice } from "./slice.js";
import { softmax } from "./softmax.js";
import { sumTo } from "./sum-to.js";
import { transpose } from "./transpose.js";
import { weightedSum } from "./weighted-sum.js";

export const LOWERINGS: Readonly<Record<string, OpLowering>> = {
  projection,
  reshape,
  transpose,
  slice,
  rope,
  "kv-append": kvAppend,
  score,
  alibi,
  mask,
  "score-mod": scoreMod,
  "mask-mod": maskMod,
  softmax,
  dropout,
  "weighted-sum": weightedSum,
  "out-proj": outProj,
  attention,
  "layer-norm": layerNorm,
  gelu,
  relu,
  add,
  "rms-norm": rmsNorm,
  pointwise,
  mul,
  embedding,
  "position-embedding": positionEmbedding,
  "cross-entropy": crossEntropy,
  "linear-gelu": linearGelu,
  "add-layer-norm": addLayerNorm,
  "sum-to": sumTo,
  pad,
};
