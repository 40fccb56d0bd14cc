// Canvas heatmaps: one per head of `weights` [B, H, L, S] (rows = queries i, columns = keys j), and a plain matrix
// heatmap for the tensor view. Masked cells are those the `masked` node set to −∞; they are drawn in MASKED_RGB,
// never on the ramp. Hovering a cell writes its value into the readout element. In the Inspect tab a head can be
// clicked to ablate it: its figure then says so and draws the zeros the run's override put there.
import type { Tensor } from "@attngraph/tensor";
import { cellColour, cssColour, MASKED_RGB, rampColour, type ColourRange } from "./colormap.js";
import { el } from "./config-form.js";
import { formatValue } from "./tensor-stats.js";

export interface Matrix {
  readonly rows: number;
  readonly cols: number;
  value(i: number, j: number): number;
  masked(i: number, j: number): boolean;
}

/** Pixels per cell: big enough to hover, small enough that a 64×64 head fits. */
export function cellSize(rows: number, cols: number): number {
  return Math.max(4, Math.min(44, Math.floor(288 / Math.max(rows, cols))));
}

/**
 * A canvas drawing `m` at `px` pixels per cell; hovering calls `onHover(i, j)`. The canvas carries data-rows, data-cols and data-cell (pixels
 * per cell), so a test can aim at a cell the way a user would.
 */
export function matrixCanvas(
  m: Matrix,
  range: ColourRange,
  onHover: (i: number, j: number) => void,
  px = cellSize(m.rows, m.cols),
): HTMLCanvasElement {
  const canvas = document.createElement("canvas");
  canvas.className = "heatmap";
  canvas.width = m.cols * px;
  canvas.height = m.rows * px;
  Object.assign(canvas.dataset, { rows: String(m.rows), cols: String(m.cols), cell: String(px) });
  const ctx = canvas.getContext("2d");
  if (ctx) {
    for (let i = 0; i < m.rows; i++) {
      for (let j = 0; j < m.cols; j++) {
        ctx.fillStyle = cssColour(cellColour(m.value(i, j), range, m.masked(i, j)));
        ctx.fillRect(j * px, i * px, px, px);
      }
    }
  }
  canvas.addEventListener("mousemove", (e) => {
    const r = canvas.getBoundingClientRect();
    const j = Math.floor(((e.clientX - r.left) / r.width) * m.cols);
    const i = Math.floor(((e.clientY - r.top) / r.height) * m.rows);
    if (i >= 0 && i < m.rows && j >= 0 && j < m.cols) onHover(i, j);
  });
  return canvas;
}

/** A colour bar for `range` and the masked swatch. */
export function legend(range: ColourRange): HTMLElement {
  const bar = el("canvas", { class: "bar", width: "120", height: "10" }) as HTMLCanvasElement;
  const ctx = bar.getContext("2d");
  if (ctx) for (let x = 0; x < 120; x++) (ctx.fillStyle = cssColour(rampColour(x / 119))), ctx.fillRect(x, 0, 1, 10);
  const swatch = el("span", { class: "swatch", style: `background: ${cssColour(MASKED_RGB)}` });
  return el("div", { class: "legend" }, [
    formatValue(range.min),
    bar,
    formatValue(range.max),
    el("span", {}, [swatch, " masked"]),
  ]);
}

/** Which heads are ablated in the drawn run, and what a click on a head asks for. */
export interface HeadAblation {
  readonly ablated: readonly number[];
  onToggle(head: number): void;
}

/**
 * One heatmap per head of `weights` for batch index `b`. `masked` (the mask node's output, same shape) marks the
 * masked cells; without a mask node nothing is masked. With `ablation`, clicking a head's heatmap (or its button)
 * toggles that head, and ablated heads are marked (class `ablated`, `data-ablated="true"`, "ablated" in the caption).
 */
export function renderWeightHeatmaps(
  container: HTMLElement,
  readout: HTMLElement,
  weights: Tensor,
  masked: Tensor | undefined,
  b: number,
  ablation?: HeadAblation,
): void {
  const [B, H, L, S] = weights.shape as [number, number, number, number];
  const w = weights.toFloat32Array();
  const mk = masked && masked.size === weights.size ? masked.toFloat32Array() : undefined;
  const bi = Math.min(Math.max(0, b), B - 1);
  container.replaceChildren();
  for (let h = 0; h < H; h++) {
    const base = (bi * H + h) * L * S;
    const m: Matrix = {
      rows: L,
      cols: S,
      value: (i, j) => w[base + i * S + j]!,
      masked: (i, j) => mk !== undefined && mk[base + i * S + j] === -Infinity,
    };
    let maskedCount = 0;
    for (let i = 0; i < L; i++) for (let j = 0; j < S; j++) if (m.masked(i, j)) maskedCount++;
    const canvas = matrixCanvas(m, { min: 0, max: 1 }, (i, j) => {
      const v = m.value(i, j);
      readout.textContent = `weights[b=${bi}, h=${h}, i=${i}, j=${j}] = ${m.masked(i, j) ? `masked (${formatValue(v)})` : formatValue(v)}`;
    });
    canvas.dataset.head = String(h);
    canvas.dataset.masked = String(maskedCount);
    const off = ablation?.ablated.includes(h) ?? false;
    canvas.setAttribute(
      "aria-label",
      `attention weights of head ${h}, batch ${bi}: ${L} queries × ${S} keys, ${maskedCount} masked${off ? ", ablated (zeroed)" : ""}`,
    );
    const caption: (Node | string)[] = [`head ${h}${off ? " · ablated" : ""} · ${maskedCount} of ${L * S} masked`];
    const figure = el("figure", { "data-head": String(h) }, [canvas]);
    if (ablation) {
      figure.dataset.ablated = String(off);
      figure.classList.toggle("ablated", off);
      const button = el(
        "button",
        { type: "button", class: "ablate-head", "data-head": String(h), "aria-pressed": String(off) },
        [off ? "restore" : "ablate"],
      );
      button.title = off ? `run head ${h} again` : `zero head ${h}'s weights in the next run`;
      button.addEventListener("click", () => ablation.onToggle(h));
      canvas.title = button.title;
      canvas.addEventListener("click", () => ablation.onToggle(h));
      caption.push(" ", button);
    }
    figure.append(el("figcaption", {}, caption));
    container.append(figure);
  }
  container.append(legend({ min: 0, max: 1 }));
}
