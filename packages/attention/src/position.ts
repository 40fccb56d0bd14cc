// The builders' `position` option: which position encoding to add, checked once here with errors naming the key, and
// turned into the attributes of the graph's alibi or rope nodes.
import type { AlibiAttrs, RopeAttrs } from "@attngraph/graph";
import { ConfigError } from "./config.js";

/**
 * A position encoding for the attention block.
 * - `alibi`: a node `scores.alibi` adds m_h · (j − i) to the scaled scores before the mask; `slopes` has one number
 *   per query head H (default: the ALiBi paper's slopes for H heads). The node applies the score scale, and the
 *   softmax gets scale 1.
 * - `rope`: nodes `q.rope` and `k.rope` rotate the split query and key heads (split-half pairs, GPT-NeoX/Llama) before
 *   the score; `base` (10000), `rotaryDim` (even, <= D; default D), `positionOffset` (position of token 0; default 0).
 */
export type PositionEncoding =
  | { readonly kind: "alibi"; readonly slopes?: number[] }
  | { readonly kind: "rope"; readonly base?: number; readonly rotaryDim?: number; readonly positionOffset?: number };

const KEYS: Record<PositionEncoding["kind"], readonly string[]> = {
  alibi: ["kind", "slopes"],
  rope: ["kind", "base", "rotaryDim", "positionOffset"],
};

/** ALiBi's attributes apart from the scale, or RoPE's, for H query heads of dim D. */
export type PositionAttrs =
  | { readonly kind: "alibi"; readonly attrs: Omit<AlibiAttrs, "scale"> }
  | { readonly kind: "rope"; readonly attrs: RopeAttrs };

/** Checks the option (unknown keys, types, slopes per head, rotaryDim against D) and fills its defaults. */
export function positionAttrs(position: unknown, H: number, D: number): PositionAttrs {
  if (typeof position !== "object" || position === null || Array.isArray(position)) {
    throw new ConfigError(
      "position",
      "invalid position encoding",
      '{ kind: "alibi" | "rope", ... }',
      JSON.stringify(position),
    );
  }
  const p = position as Record<string, unknown>;
  if (p.kind !== "alibi" && p.kind !== "rope")
    throw new ConfigError("position.kind", "unknown position encoding", '"alibi" or "rope"', JSON.stringify(p.kind));
  const keys = KEYS[p.kind];
  for (const k of Object.keys(p))
    if (!keys.includes(k)) throw new ConfigError(`position.${k}`, `unknown key for ${p.kind}`, keys.join(", "), k);

  if (p.kind === "alibi") {
    const slopes = p.slopes ?? null;
    if (slopes !== null) {
      if (!Array.isArray(slopes) || !slopes.every((m) => typeof m === "number" && Number.isFinite(m))) {
        throw new ConfigError(
          "position.slopes",
          "invalid ALiBi slopes",
          "an array of finite numbers",
          JSON.stringify(slopes),
        );
      }
      if (slopes.length !== H)
        throw new ConfigError(
          "position.slopes",
          "ALiBi needs one slope per query head",
          `${H} slopes`,
          String(slopes.length),
        );
    }
    return {
      kind: "alibi",
      attrs: { slopes: slopes === null ? null : [...(slopes as number[])], alignment: "top-left" },
    };
  }

  const base = p.base ?? 10000;
  if (typeof base !== "number" || !Number.isFinite(base) || base <= 0)
    throw new ConfigError("position.base", "invalid RoPE base", "a finite number > 0", JSON.stringify(base));
  const rotaryDim = p.rotaryDim ?? null;
  if (
    rotaryDim !== null &&
    (!Number.isSafeInteger(rotaryDim) ||
      (rotaryDim as number) < 2 ||
      (rotaryDim as number) % 2 !== 0 ||
      (rotaryDim as number) > D)
  ) {
    throw new ConfigError(
      "position.rotaryDim",
      "invalid rotaryDim",
      `an even integer in [2, ${D}] (the head dim D)`,
      JSON.stringify(rotaryDim),
    );
  }
  if (rotaryDim === null && D % 2 !== 0)
    throw new ConfigError(
      "position.rotaryDim",
      "RoPE over the whole head dim needs an even D",
      `an even rotaryDim <= ${D}`,
      `none with D=${D}`,
    );
  const positionOffset = p.positionOffset ?? 0;
  if (!Number.isSafeInteger(positionOffset) || (positionOffset as number) < 0) {
    throw new ConfigError(
      "position.positionOffset",
      "invalid positionOffset",
      "an integer >= 0",
      JSON.stringify(positionOffset),
    );
  }
  return {
    kind: "rope",
    attrs: { base, rotaryDim: rotaryDim as number | null, positionOffset: positionOffset as number, inverse: false },
  };
}
