// The attention chains of an imported graph, read off the attngraph nodes built: weighted-sum ← softmax ← [mask] ←
// score. Each gets the short aliases attngraph's own builders use (`<scope>scores`, `masked`, `weights`,
// `context.heads`, the scope being the ONNX path of its Softmax, e.g. "/h.0/attn/"), and a line in explain().
import type { Chain, LowerContext } from "./lower-context.js";

export function findChains(ctx: LowerContext): Chain[] {
  const nodes = new Map(ctx.b.parts().nodes.map((n) => [n.name, n]));
  const built = new Map(ctx.built.map((b) => [b.name, b]));
  const chains: Chain[] = [];
  for (const ws of nodes.values()) {
    if (ws.kind !== "weighted-sum") continue;
    const sm = nodes.get(ws.inputs["weights"] ?? "");
    if (sm?.kind !== "softmax") continue;
    // Between the softmax and the score: masks and score modifications, any of them.
    const mods: (typeof ws)[] = [];
    let below = nodes.get(sm.inputs["x"] ?? "");
    while (below && (below.kind === "mask" || below.kind === "mask-mod" || below.kind === "score-mod")) {
      mods.unshift(below);
      below = nodes.get(below.inputs[below.kind === "mask" ? "scores" : "x"] ?? "");
    }
    if (below?.kind !== "score") continue;
    const mask = mods.find((m) => m.kind === "mask");
    const parts = [below, ...mods, sm, ws];
    const onnx = parts.flatMap((p) => built.get(p.name)?.onnx ?? []);
    const scope = scopeOf(built.get(sm.name)?.onnx.find((o) => /softmax/i.test(o)) ?? sm.name);
    const alias = (short: string, name: string) => {
      const key = `${scope}${short}`;
      if (key !== name && !nodes.has(key) && !ctx.aliases.has(key)) ctx.aliases.set(key, name);
    };
    alias("scores", below.name);
    if (mask) alias("masked", mask.name);
    alias("weights", sm.name);
    alias("context.heads", ws.name);
    const what = [
      ...(mask ? [built.get(mask.name)?.note ?? "mask"] : []),
      ...mods.filter((m) => m.kind !== "mask").map((m) => m.kind),
    ];
    chains.push({ scope, onnx, nodes: parts.map((p) => p.name), mask: what.join(", ") || "none" });
  }
  return chains;
}

/** "/h.0/attn/Softmax" → "/h.0/attn/"; a name without a path → "". */
export function scopeOf(name: string): string {
  const i = Math.max(name.lastIndexOf("/"), name.lastIndexOf("."));
  return i >= 0 ? name.slice(0, i + 1) : "";
}
