// The attention of one token: a grid of layers (rows) × heads (columns), each cell the clicked query's row of that
// head's pattern over the keys it can see, drawn with the Inspect tab's heatmap canvas and 0–1 colour scale, with the
// keys' tokens written under the cells. Hover a cell to read its value.
import { el } from "./config-form.js";
import { legend, matrixCanvas } from "./heatmap.js";
import { rowCellSize, type AttentionRows } from "./attention-rows.js";
import { formatValue } from "./tensor-stats.js";

/** Below this many pixels a cell's token label cannot be read: the labels are left out (hover still names it). */
const MIN_LABELLED_CELL = 10;

/**
 * Draws `rows` into `container`. `labels` are the run's tokens as shown (index 0 is the run's first position); each
 * canvas carries data-layer, data-head and data-values (its row, as JSON), so a test can read what is drawn.
 */
export function renderAttentionGrid(
  container: HTMLElement,
  readout: HTMLElement,
  rows: AttentionRows,
  labels: readonly string[],
): void {
  const i = rows.position;
  const H = rows.layers[0]?.length ?? 0;
  const head = el("tr", {}, [
    el("th", {}, ["layer \\ head"]),
    ...Array.from({ length: H }, (_, h) => el("th", {}, [`head ${h}`])),
  ]);
  const body = rows.layers.map((heads, layer) =>
    el("tr", { "data-layer": String(layer) }, [
      el("th", {}, [`layer ${layer}`]),
      ...heads.map((row, h) => {
        const px = rowCellSize(row.length);
        const canvas = matrixCanvas(
          { rows: 1, cols: row.length, value: (_, j) => row[j]!, masked: () => false },
          { min: 0, max: 1 },
          (_, j) =>
            (readout.textContent = `layer ${layer}, head ${h}: "${labels[i]}" (${i}) attends to "${labels[j]}" (${j}) with ${formatValue(row[j]!)}`),
          px,
        );
        Object.assign(canvas.dataset, { layer: String(layer), head: String(h), values: JSON.stringify([...row]) });
        canvas.setAttribute("aria-label", `layer ${layer}, head ${h}: attention of token ${i} over tokens 0 to ${i}`);
        const keys =
          px < MIN_LABELLED_CELL
            ? []
            : [
                el(
                  "div",
                  { class: "key-labels" },
                  labels.slice(0, row.length).map((t) => el("span", { style: `width: ${px}px`, title: t }, [t])),
                ),
              ];
        return el("td", {}, [el("figure", { "data-layer": String(layer), "data-head": String(h) }, [canvas, ...keys])]);
      }),
    ]),
  );
  container.replaceChildren(
    el("table", { class: "attention-grid" }, [el("thead", {}, [head]), el("tbody", {}, body)]),
    legend({ min: 0, max: 1 }),
  );
  Object.assign(container.dataset, { layers: String(rows.layers.length), heads: String(H), position: String(i) });
}
