// The tensor of the node clicked in the graph: its shape, min/max/mean (masked −∞ counted apart), and one 2-D slice
// (the last two axes) as a table when small, else as a heatmap. The Inspect tab draws two: the clicked node's (ids
// "tensor-…") and the graph's output (ids "output-…"). Table cells carry their exact value in `data-value`.
import type { Tensor } from "@attngraph/tensor";
import { cellColour } from "./colormap.js";
import { el } from "./config-form.js";
import { matrixCanvas } from "./heatmap.js";
import { formatValue, matrixSlice, sliceLabel, tensorStats } from "./tensor-stats.js";

export interface TensorInfo {
  readonly node: string;
  readonly kind: string;
  readonly executor: string;
  readonly tensor: Tensor;
}

export interface TensorViewOptions {
  /** The matrix of the leading axes shown first; the slice input changes it. */
  readonly slice?: number;
  /** Prefix of the view's element ids (`${ids}-head`, `${ids}-stats`, `${ids}-table`, …); default "tensor". */
  readonly ids?: string;
}

/** Draws `info` into `container`. */
export function renderTensor(
  container: HTMLElement,
  info: TensorInfo | undefined,
  hint: string,
  options: TensorViewOptions = {},
): void {
  const { slice = 0, ids = "tensor" } = options;
  container.replaceChildren();
  if (!info) {
    container.append(el("p", { class: "muted" }, [hint]));
    return;
  }
  const { tensor } = info;
  const data = tensor.toFloat32Array();
  const s = tensorStats(data);
  const m = matrixSlice(tensor.shape, data, slice);
  const shape = `[${tensor.shape.join(", ")}]`;
  const extra = [
    s.negInf ? `${s.negInf} masked (−∞)` : "",
    s.nan ? `${s.nan} NaN` : "",
    s.posInf ? `${s.posInf} +∞` : "",
  ]
    .filter(Boolean)
    .join(", ");
  container.append(
    el("p", { id: `${ids}-head` }, [
      el("strong", {}, [info.node]),
      ` (${info.kind} on ${info.executor}) shape ${shape}`,
    ]),
    el("p", { id: `${ids}-stats` }, [
      `min ${formatValue(s.min)} · max ${formatValue(s.max)} · mean ${formatValue(s.mean)} · ${s.count} values${extra ? ` · ${extra}` : ""}`,
    ]),
  );
  const readout = el("output", { id: `${ids}-readout` }, [""]);
  const draw = (index: number) => {
    const sl = matrixSlice(tensor.shape, data, index);
    const label = `${info.node}${sliceLabel(tensor.shape, sl)}`;
    const range = { min: Number.isNaN(s.min) ? 0 : s.min, max: Number.isNaN(s.max) ? 1 : s.max };
    if (sl.rows <= 24 && sl.cols <= 16) {
      const head = el("tr", {}, [
        el("th", {}, ["i \\ j"]),
        ...Array.from({ length: sl.cols }, (_, j) => el("th", {}, [String(j)])),
      ]);
      const rows = Array.from({ length: sl.rows }, (_, i) =>
        el("tr", {}, [
          el("th", {}, [String(i)]),
          ...Array.from({ length: sl.cols }, (_, j) => {
            const v = sl.at(i, j);
            const [r, g, b] = cellColour(v, range);
            // A light tint of the heatmap colour keeps the number readable.
            const tint = v === -Infinity ? "" : `background: rgba(${r}, ${g}, ${b}, 0.25)`;
            // The exact float32 value, for a reader (or a test) that needs more than the 6 digits shown.
            return el("td", { ...(v === -Infinity ? { class: "masked" } : { style: tint }), "data-value": String(v) }, [
              formatValue(v),
            ]);
          }),
        ]),
      );
      return el("div", {}, [
        el("p", { class: "muted" }, [label]),
        el("table", { id: `${ids}-table` }, [head, ...rows]),
      ]);
    }
    const canvas = matrixCanvas({ rows: sl.rows, cols: sl.cols, value: sl.at, masked: () => false }, range, (i, j) => {
      readout.textContent = `${info.node}[${[...sl.lead, i, j].join(", ")}] = ${formatValue(sl.at(i, j))}`;
    });
    return el("div", {}, [el("p", { class: "muted" }, [label]), canvas, el("p", {}, [readout])]);
  };
  let body = draw(m.lead.length ? slice : 0);
  if (m.slices > 1) {
    const picker = el("input", {
      type: "number",
      min: "0",
      max: String(m.slices - 1),
      value: String(Math.min(slice, m.slices - 1)),
      id: `${ids}-slice`,
    }) as HTMLInputElement;
    picker.addEventListener("input", () => {
      const next = draw(Number(picker.value) || 0);
      body.replaceWith(next);
      body = next;
    });
    container.append(el("label", {}, [`slice of the leading axes (0–${m.slices - 1}): `, picker]));
  }
  container.append(body);
}
