// The op graph as SVG: graph inputs and nodes (weights are listed in each node's tooltip, not drawn), one edge per
// input slot, laid out in layers by longest path from the inputs. Each node shows its op and the executor the plan
// placed it on (as explain() says), or the fused step that runs it; clicking a node selects it for the tensor view.
// An executor diff colours the nodes by its verdict (showDiffStatus), over whatever executor the run placed them on.
import type { OpGraph } from "@attngraph/graph";
import type { Plan } from "@attngraph/scheduler";

export interface NodePlacement {
  readonly executor: string;
  /** The fused step's op (e.g. "attention") when this node runs inside one. */
  readonly fusedInto?: string;
  readonly how: string;
  readonly skipped: readonly string[];
}

/** Where each graph node runs in `plan`; nodes the plan dropped (dead) are absent. */
export function placements(plan: Plan): Map<string, NodePlacement> {
  const out = new Map<string, NodePlacement>();
  for (const s of plan.steps) {
    const p = { executor: s.placement.executor, how: s.placement.how, skipped: s.placement.skipped };
    if (s.fused) for (const n of s.fused) out.set(n, { ...p, fusedInto: s.kind });
    else out.set(s.node, p);
  }
  return out;
}

/** Layer of each drawn value: inputs 0, a node one below its deepest drawn input. */
export function layers(graph: OpGraph): Map<string, number> {
  const layer = new Map<string, number>();
  for (const v of graph.inputs) layer.set(v.name, 0);
  for (const n of graph.nodes) {
    let d = 0;
    for (const src of Object.values(n.inputs)) d = Math.max(d, (layer.get(src) ?? -1) + 1);
    layer.set(n.name, d);
  }
  return layer;
}

const SVG = "http://www.w3.org/2000/svg";
const W = 168;
const H = 44;
const GX = 18;
const GY = 26;
const COLOURS: Record<string, string> = { cpu: "#0969da", wasm: "#bc4c00", webgpu: "#1a7f37" };

function svg(tag: string, attrs: Record<string, string | number>, text?: string): SVGElement {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

export function renderGraph(
  container: HTMLElement,
  graph: OpGraph,
  plan: Plan,
  selected: string | undefined,
  onSelect: (node: string) => void,
): void {
  const layer = layers(graph);
  const placed = placements(plan);
  const rows: string[][] = [];
  for (const [name, d] of layer) (rows[d] ??= []).push(name);
  const widest = Math.max(...rows.map((r) => r.length));
  const width = widest * (W + GX) + GX;
  const height = rows.length * (H + GY) + GY;
  const pos = new Map<string, { x: number; y: number }>();
  rows.forEach((row, d) => {
    const offset = (width - row.length * (W + GX) + GX) / 2;
    row.forEach((name, k) => pos.set(name, { x: offset + k * (W + GX), y: GY + d * (H + GY) }));
  });

  const root = svg("svg", {
    viewBox: `0 0 ${width} ${height}`,
    width,
    height,
    role: "img",
    "aria-label": "op graph",
  }) as SVGSVGElement;
  for (const n of graph.nodes) {
    const to = pos.get(n.name)!;
    for (const src of Object.values(n.inputs)) {
      const from = pos.get(src);
      if (!from) continue; // a weight: not drawn
      const x1 = from.x + W / 2,
        y1 = from.y + H,
        x2 = to.x + W / 2,
        y2 = to.y;
      root.append(
        svg("path", {
          class: "edge",
          d: `M${x1},${y1} C${x1},${y1 + GY} ${x2},${y2 - GY} ${x2},${y2}`,
          "data-from": src,
          "data-to": n.name,
        }),
      );
    }
  }
  const inputNames = new Set(graph.inputs.map((v) => v.name));
  const weightNames = new Set(graph.weights.map((v) => v.name));
  for (const [name, p] of pos) {
    const isInput = inputNames.has(name);
    const node = isInput ? undefined : graph.node(name);
    const where = placed.get(name);
    const executor = isInput ? "input" : where ? where.executor : "not run";
    const cls = ["node", isInput ? "input" : where ? "" : "dead", name === selected ? "selected" : ""]
      .filter(Boolean)
      .join(" ");
    const g = svg("g", {
      class: cls,
      transform: `translate(${p.x},${p.y})`,
      "data-node": name,
      "data-executor": executor,
      tabindex: 0,
    });
    g.append(svg("rect", { width: W, height: H, rx: 6, stroke: COLOURS[executor] ?? "#8c959f" }));
    g.append(svg("text", { class: "name", x: 8, y: 17 }, name));
    const detail = isInput
      ? `input [${graph.inputs.find((v) => v.name === name)!.shape.join(", ")}]`
      : where?.fusedInto
        ? `${node!.kind} → ${where.executor} (fused: ${where.fusedInto})`
        : `${node!.kind} → ${executor}`;
    g.append(svg("text", { x: 8, y: 34, fill: COLOURS[executor] ?? "#57606a" }, detail));
    const weights = node ? Object.values(node.inputs).filter((v) => weightNames.has(v)) : [];
    const tip = [
      `${name}${node ? ` (${node.kind})` : ""}`,
      node ? `shape [${node.shape.join(", ")}]` : "",
      weights.length ? `weights: ${weights.join(", ")}` : "",
      where
        ? `placement: ${where.executor} (${where.how})${where.skipped.length ? `; skipped ${where.skipped.join("; ")}` : ""}`
        : isInput
          ? ""
          : "not run: reaches no output and no tap",
    ].filter(Boolean);
    g.append(svg("title", {}, tip.join("\n")));
    if (!isInput) {
      g.addEventListener("click", () => onSelect(name));
      g.addEventListener("keydown", (e) => {
        if ((e as KeyboardEvent).key === "Enter") onSelect(name);
      });
    }
    root.append(g);
  }
  const legend = Object.entries(COLOURS)
    .map(([k, c]) => `<span style="color:${c}">■ ${k}</span>`)
    .join(" ");
  container.replaceChildren(root);
  container.insertAdjacentHTML("beforeend", `<p class="muted">executor per node: ${legend}; dashed: input</p>`);
}

/**
 * Marks each node of the drawn graph with its executor-diff status: class `diff-<status>` (diff-agree, diff-disagree,
 * diff-unsupported, diff-failed, diff-not-run) and `data-diff`. Nodes missing from `statuses` (the graph's inputs) and
 * every node when `statuses` is undefined lose any earlier mark.
 */
export function showDiffStatus(container: HTMLElement, statuses: ReadonlyMap<string, string> | undefined): void {
  for (const g of container.querySelectorAll<SVGGElement>("g.node")) {
    for (const c of [...g.classList]) if (c.startsWith("diff-")) g.classList.remove(c);
    const status = statuses?.get(g.dataset.node ?? "");
    if (status === undefined) delete g.dataset.diff;
    else {
      g.classList.add(`diff-${status}`);
      g.dataset.diff = status;
    }
  }
}
