// The backward ops of rows and elements against their float64 references (see backward-checks.ts, which runs these
// after its own): layer-norm-grad and layer-norm-weight-grad, gelu-grad, relu's derived gradient, embedding-grad,
// cross-entropy-grad, and rope's `inverse`.
// Each group lives in its own file; this runs them in their original order.
import { activationGradChecks } from "./activation-grad-checks.js";
import type { ContractContext } from "./context.js";
import { crossEntropyGradChecks } from "./cross-entropy-grad-checks.js";
import { embeddingGradChecks } from "./embedding-grad-checks.js";
import { layerNormGradChecks } from "./layer-norm-grad-checks.js";
import { ropeInverseChecks } from "./rope-inverse-checks.js";

export function backwardRowChecks(ctx: ContractContext): void {
  layerNormGradChecks(ctx);
  activationGradChecks(ctx);
  embeddingGradChecks(ctx);
  crossEntropyGradChecks(ctx);
  ropeInverseChecks(ctx);
}
