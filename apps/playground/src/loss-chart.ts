// The loss curve: an SVG line chart redrawn as steps come in. The x axis spans the planned steps (so the line grows to
// the right), the y axis runs from 0 to a round number at or above the highest loss. The scaling is pure and
// unit-tested; renderLossChart only turns it into SVG.

export interface ChartBox {
  readonly width: number;
  readonly height: number;
  /** Room for the axis labels. */
  readonly left: number;
  readonly right: number;
  readonly top: number;
  readonly bottom: number;
}

export const CHART_BOX: ChartBox = { width: 480, height: 220, left: 44, right: 12, top: 10, bottom: 28 };

/** The smallest of 1, 2, 2.5, 5 × 10^k that is >= v (1 for v <= 0 or not finite). */
export function niceCeil(v: number): number {
  if (!(v > 0) || !Number.isFinite(v)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v * (1 - 1e-12)) return m * p;
  return 10 * p;
}

export interface LossScale {
  /** The last step on the x axis: the planned steps, or more if more came. */
  readonly xMax: number;
  /** The top of the y axis (its bottom is 0). */
  readonly yMax: number;
  /** Step (1-based) → pixel x. */
  x(step: number): number;
  /** Loss → pixel y (clamped to the plot). */
  y(loss: number): number;
}

/** The scale for `losses` (losses[i] is step i + 1) of a run planned for `planned` steps. */
export function lossScale(losses: readonly number[], planned: number, box: ChartBox = CHART_BOX): LossScale {
  const xMax = Math.max(1, planned, losses.length);
  const finite = losses.filter((l) => Number.isFinite(l));
  const yMax = niceCeil(finite.length ? Math.max(...finite) : 0);
  const w = box.width - box.left - box.right;
  const h = box.height - box.top - box.bottom;
  return {
    xMax,
    yMax,
    x: (step) => box.left + (xMax > 1 ? ((step - 1) / (xMax - 1)) * w : 0),
    y: (loss) => box.top + (1 - Math.min(1, Math.max(0, loss / yMax))) * h,
  };
}

/** The polyline's points ("x,y x,y …", one decimal); a loss that is not finite breaks nothing, it is left out. */
export function linePoints(losses: readonly number[], scale: LossScale): string {
  const out: string[] = [];
  losses.forEach((l, i) => {
    if (Number.isFinite(l)) out.push(`${scale.x(i + 1).toFixed(1)},${scale.y(l).toFixed(1)}`);
  });
  return out.join(" ");
}

const NS = "http://www.w3.org/2000/svg";

function svgEl(tag: string, attrs: Record<string, string | number>, text?: string): SVGElement {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

/**
 * Draws the chart into `svg`. The svg carries data-points (steps drawn), data-first and data-last (their losses) and
 * data-y-max, for a test to read what a user sees.
 */
export function renderLossChart(
  svg: SVGSVGElement,
  losses: readonly number[],
  planned: number,
  box: ChartBox = CHART_BOX,
): void {
  const s = lossScale(losses, planned, box);
  const bottom = box.height - box.bottom;
  const right = box.width - box.right;
  svg.setAttribute("viewBox", `0 0 ${box.width} ${box.height}`);
  svg.setAttribute("width", String(box.width));
  svg.setAttribute("height", String(box.height));
  const children: SVGElement[] = [];
  for (const f of [0, 0.5, 1]) {
    const y = s.y(f * s.yMax);
    children.push(svgEl("line", { class: f === 0 ? "axis" : "grid", x1: box.left, x2: right, y1: y, y2: y }));
    children.push(
      svgEl(
        "text",
        { class: "tick", x: box.left - 6, y: y + 4, "text-anchor": "end" },
        String(Number((f * s.yMax).toPrecision(3))),
      ),
    );
  }
  children.push(svgEl("line", { class: "axis", x1: box.left, x2: box.left, y1: box.top, y2: bottom }));
  for (const step of s.xMax > 1 ? [1, s.xMax] : [1]) {
    children.push(
      svgEl(
        "text",
        { class: "tick", x: s.x(step), y: bottom + 14, "text-anchor": step === 1 ? "start" : "end" },
        String(step),
      ),
    );
  }
  children.push(
    svgEl("text", { class: "label", x: (box.left + right) / 2, y: box.height - 2, "text-anchor": "middle" }, "step"),
  );
  children.push(svgEl("polyline", { class: "loss", points: linePoints(losses, s) }));
  const last = losses.length;
  if (last && Number.isFinite(losses[last - 1]!))
    children.push(svgEl("circle", { class: "loss", cx: s.x(last), cy: s.y(losses[last - 1]!), r: 3 }));
  svg.replaceChildren(...children);
  Object.assign(svg.dataset, {
    points: String(last),
    first: String(losses[0] ?? ""),
    last: String(losses[last - 1] ?? ""),
    yMax: String(s.yMax),
  });
  svg.setAttribute(
    "aria-label",
    last
      ? `loss curve: ${last} of ${planned} steps, from ${losses[0]!.toFixed(4)} to ${losses[last - 1]!.toFixed(4)}`
      : "loss curve: no steps yet",
  );
}
