// Per-node timings of the last run, as `session.events$` reported them (node-end: executor and ms).
import { el } from "./config-form.js";
import type { NodeTiming } from "./run.js";

export function renderTimings(container: HTMLElement, timings: readonly NodeTiming[], totalMs: number): void {
  const sum = timings.reduce((a, t) => a + t.ms, 0);
  const head = el(
    "tr",
    {},
    ["node", "op", "executor", "shape", "ms"].map((h) => el("th", {}, [h])),
  );
  const rows = timings.map((t) =>
    el("tr", { "data-node": t.node }, [
      el("td", { style: "text-align: left" }, [t.node]),
      el("td", { style: "text-align: left" }, [t.kind]),
      el("td", { style: "text-align: left" }, [t.executor]),
      el("td", { style: "text-align: left" }, [`[${t.shape.join(", ")}]`]),
      el("td", {}, [t.ms.toFixed(3)]),
    ]),
  );
  container.replaceChildren(
    el("table", { id: "timings-table" }, [head, ...rows]),
    el("p", { class: "muted" }, [
      `${timings.length} steps, ${sum.toFixed(3)} ms in steps, ${totalMs.toFixed(3)} ms for the run`,
    ]),
  );
}
