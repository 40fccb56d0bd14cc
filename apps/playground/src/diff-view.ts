// The "Diff executors" panel: pick a reference and another executor, run every node of the last good run's graph on
// both (src/diff-run.ts), and show the verdict three ways: the graph view's nodes coloured by status, a table with one
// row per node, and the first disagreement with its repro as a download. The colours stay on the graph only while it
// is the graph the diff ran (same config and numbers): a later run of another config leaves the table, marked stale.
import type { DiffResult } from "@attngraph/tools";
import { el } from "./config-form.js";
import {
  DIFF_STATUSES,
  DiffSetupError,
  diffRows,
  diffSummary,
  firstLine,
  nodeStatuses,
  reproFileName,
  statusClass,
} from "./diff-model.js";
import { runDiff, type DiffSubject } from "./diff-run.js";
import type { ErrorsView } from "./errors-view.js";
import type { ExecutorEntry } from "./executor-entry.js";
import { showDiffStatus } from "./graph-view.js";

/** The graph the page last drew, with its numbers and the key of what made it (see graphKey). */
export interface DrawnGraph extends DiffSubject {
  readonly key: string;
}

export interface DiffView {
  /** The graph view was redrawn for `key`: put this diff's colours back on it if it is the graph the diff ran. */
  graphDrawn(key: string): void;
}

export function createDiffView(
  container: HTMLElement,
  graphView: HTMLElement,
  entries: readonly ExecutorEntry[],
  errors: ErrorsView,
  drawn: () => DrawnGraph | undefined,
): DiffView {
  const pick = (id: string, value: string) => {
    const select = el(
      "select",
      { id },
      entries.map((e) => el("option", { value: e.name }, [e.name])),
    ) as HTMLSelectElement;
    select.value = value;
    return select;
  };
  const a = pick("diff-reference", entries[0]?.name ?? "");
  const b = pick("diff-other", entries[1]?.name ?? entries[0]?.name ?? "");
  const button = el("button", { type: "button", id: "diff-run" }, ["Run diff"]) as HTMLButtonElement;
  const status = el("p", { id: "diff-status", "data-state": "idle", "data-seq": "0" }, [
    "not run yet: every node of the graph above, on both executors, compared",
  ]);
  const result = el("div", { id: "diff-result" });
  container.replaceChildren(
    el("p", { class: "diff-controls" }, [
      el("label", {}, ["reference ", a]),
      el("label", {}, [" against ", b]),
      " ",
      button,
    ]),
    status,
    result,
  );

  let shown: { readonly key: string; readonly result: DiffResult } | undefined;
  let currentKey: string | undefined;
  let reproUrl: string | undefined;
  let seq = 0;

  function setStatus(state: "running" | "done" | "error", text: string): void {
    status.dataset.state = state;
    if (state !== "running") status.dataset.seq = String(++seq);
    status.textContent = text;
  }

  function colour(): void {
    const fresh = shown !== undefined && shown.key === currentKey;
    showDiffStatus(graphView, fresh ? nodeStatuses(shown!.result) : undefined);
    result.classList.toggle("stale", shown !== undefined && !fresh);
    result.querySelector(".diff-stale")?.toggleAttribute("hidden", fresh || shown === undefined);
  }

  function draw(r: DiffResult): void {
    if (reproUrl) URL.revokeObjectURL(reproUrl); // the previous diff's repro file
    reproUrl = undefined;
    const head = el(
      "tr",
      {},
      ["node", "kind", "status", "max abs", "max rel", "ran on"].map((h) => el("th", {}, [h])),
    );
    const rows = diffRows(r).map((row) => {
      const tr = el("tr", { "data-node": row.node, "data-status": row.status, class: statusClass(row.status) }, [
        el("td", { class: "left" }, [row.node]),
        el("td", { class: "left" }, [row.kind]),
        el("td", { class: "left" }, [row.status]),
        el("td", {}, [row.maxAbs]),
        el("td", {}, [row.maxRel]),
        el("td", { class: "left" }, [row.ranOn]),
      ]);
      if (row.reason) tr.title = row.reason;
      return tr;
    });
    const first = el("p", { id: "diff-first" }, [firstLine(r)]);
    if (r.first?.repro) {
      reproUrl = URL.createObjectURL(new Blob([JSON.stringify(r.first.repro)], { type: "application/json" }));
      first.append(
        " · ",
        el("a", { id: "diff-repro", href: reproUrl, download: reproFileName(r.first) }, [
          `download the repro (${reproFileName(r.first)})`,
        ]),
      );
    }
    const legend = el(
      "p",
      { class: "muted diff-legend" },
      DIFF_STATUSES.flatMap((s) => [el("span", { class: `swatch ${statusClass(s)}` }), ` ${s} `]),
    );
    result.replaceChildren(
      el("p", { id: "diff-summary" }, [diffSummary(r)]),
      first,
      el("p", { class: "diff-stale", hidden: "" }, [
        "the graph has changed since this diff: run it again to colour the graph",
      ]),
      el("table", { id: "diff-table" }, [head, ...rows]),
      legend,
    );
  }

  button.addEventListener("click", async () => {
    const subject = drawn();
    button.disabled = true;
    setStatus("running", `diffing ${b.value} against ${a.value} on every node…`);
    try {
      if (!subject) throw new DiffSetupError("no run has finished yet: there is no graph to diff");
      const entry = (name: string) => entries.find((e) => e.name === name)!;
      const r = await runDiff(entry(a.value), entry(b.value), subject);
      errors.clear("diff");
      shown = { key: subject.key, result: r };
      draw(r);
      colour();
      setStatus(
        "done",
        `diff done: ${b.value} against ${a.value} on ${r.nodes.length} nodes, ${r.ok ? "no disagreement" : "see the first disagreement below"}`,
      );
    } catch (e) {
      errors.show("diff", e);
      setStatus("error", `the diff of ${b.value} against ${a.value} did not run: see the errors`);
    } finally {
      button.disabled = false;
    }
  });

  return {
    graphDrawn(key) {
      currentKey = key;
      colour();
    },
  };
}
