// Wires the page: the form feeds the run controller (newest config wins, runs never interleave), each finished run
// redraws the views, and every error lands in the errors view while the last good views stay on screen. Clicking a
// head toggles its ablation, which goes into the next run like any form change. The diff panel works on the last good
// run's graph and numbers. The Train and Model tabs are views of their own (src/train-view.ts, src/model-tab.ts) on the
// same executor entries.
// The browser-safe entry of the testkit: its main entry also holds the node:fs loader.
import { parseCase, type GoldenCase } from "@attngraph/testkit/case";
import "./style.css";
import { ablationLine, forHeadCount, headList, noAblation, toggleHead } from "./ablation-state.js";
import { createConfigForm } from "./config-form.js";
import { graphKey } from "./diff-model.js";
import { createDiffView, type DrawnGraph } from "./diff-view.js";
import { createErrorsView, kindOf } from "./errors-view.js";
import { executorEntries } from "./executors.js";
import { renderGraph } from "./graph-view.js";
import { renderWeightHeatmaps, type HeadAblation } from "./heatmap.js";
import type { PlaygroundConfig } from "./playground-config.js";
import { RunController } from "./run-controller.js";
import { runOnce, type RunOutcome } from "./run.js";
import { setupTabs } from "./tabs.js";
import { renderTensor } from "./tensor-view.js";
import { renderTimings } from "./timings.js";
import { createTrainView } from "./train-view.js";

const $ = (id: string) => document.getElementById(id)!;
const status = $("status");
const views = $("views");
const readout = $("cell-readout");
const errors = createErrorsView($("errors"));

let loaded: GoldenCase | undefined;
let last: RunOutcome | undefined;
/** The last good run's graph and numbers, for the diff panel. */
let lastDrawn: DrawnGraph | undefined;
let batchIndex = 0;
/** The heads the next run ablates (the drawn run's are `last.ablated`). */
let ablation = noAblation;

/** A click on a head: toggle it and re-run, as a form change would. */
const headAblation = (drawn: readonly number[]): HeadAblation => ({
  ablated: drawn,
  onToggle: (h) => {
    ablation = toggleHead(ablation, h);
    submit();
  },
});

function setStatus(state: "running" | "done" | "error", text: string, seq?: number): void {
  status.dataset.state = state;
  if (seq !== undefined) status.dataset.seq = String(seq);
  status.textContent = text;
}

function drawWeights(): void {
  if (!last) return;
  const weights = last.tapped.get("weights");
  const note = $("weights-note");
  note.replaceChildren();
  if (!weights) {
    $("heatmaps").textContent = "no weights node was tapped";
    return;
  }
  const B = weights.shape[0]!;
  batchIndex = Math.min(batchIndex, B - 1);
  // A value read before this run (say, the cell under the click that ablated its head) would no longer be true.
  readout.textContent = "hover a cell to read its value";
  const text = `[B, H, L, S] = [${weights.shape.join(", ")}] on ${last.plan.steps.find((s) => s.node === "weights")?.placement.executor ?? "?"} · rows = queries i, columns = keys j`;
  note.append(text);
  if (B > 1) {
    const pick = Object.assign(document.createElement("input"), {
      type: "number",
      min: "0",
      max: String(B - 1),
      value: String(batchIndex),
      id: "batch-index",
    });
    pick.addEventListener("input", () => {
      batchIndex = Math.max(0, Math.min(B - 1, Number(pick.value) || 0));
      renderWeightHeatmaps(
        $("heatmaps"),
        readout,
        weights,
        last?.tapped.get("masked"),
        batchIndex,
        headAblation(last?.ablated ?? []),
      );
    });
    const label = document.createElement("label");
    label.append(" · batch ", pick);
    note.append(label);
  }
  renderWeightHeatmaps(
    $("heatmaps"),
    readout,
    weights,
    last.tapped.get("masked"),
    batchIndex,
    headAblation(last.ablated),
  );
}

function drawOutput(r: RunOutcome): void {
  const { node, tensor } = r.output;
  $("output-note").textContent = r.ablated.length ? `${headList(r.ablated)} ablated` : "";
  const delta = $("ablation-delta");
  delta.textContent = ablationLine(r.ablated, r.outputDelta, node);
  delta.dataset.delta = r.outputDelta === undefined ? "" : String(r.outputDelta);
  const step = r.plan.steps.find((s) => s.node === node || s.fused?.includes(node));
  renderTensor(
    $("output"),
    { node, kind: r.graph.node(node).kind, executor: step?.placement.executor ?? "?", tensor },
    "",
    { ids: "output" },
  );
}

function draw(r: RunOutcome, config: PlaygroundConfig, c: GoldenCase | undefined): void {
  last = r;
  lastDrawn = { graph: r.graph, inputs: r.inputs, weights: r.weights, key: graphKey(config, c?.name) };
  drawWeights();
  drawOutput(r);
  $("golden-note").textContent = r.golden ?? `weights and inputs: ${r.source}`;
  renderGraph($("graph"), r.graph, r.plan, config.selected, (node) => {
    form.select(node);
    submit();
  });
  diffView.graphDrawn(lastDrawn.key);
  const sel = config.selected;
  const tensor = sel ? r.tapped.get(sel) : undefined;
  const step = sel ? r.plan.steps.find((s) => s.node === sel) : undefined;
  renderTensor(
    $("tensor"),
    sel && tensor
      ? { node: sel, kind: r.graph.node(sel).kind, executor: step?.placement.executor ?? "?", tensor }
      : undefined,
    sel
      ? `node ${sel} is not in this graph; click a node`
      : "click a node in the graph to tap it: the next run reads its tensor back",
  );
  renderTimings($("timings"), r.timings, r.totalMs);
  $("explain").textContent = r.explain;
}

const controller = new RunController<
  { config: PlaygroundConfig; loaded: GoldenCase | undefined; ablated: readonly number[] },
  RunOutcome
>(({ config, loaded: c, ablated }, signal) => runOnce(config, c, ablated, signal), {
  onStart: ({ config }, id) => setStatus("running", `run ${id} on ${config.executor}…`),
  onResult: (r, { config, loaded: c }, id) => {
    errors.clear("config");
    errors.clear("executor");
    errors.clear("run");
    draw(r, config, c);
    views.classList.remove("stale");
    setStatus(
      "done",
      `run ${id} on ${r.executor}: ${r.totalMs.toFixed(2)} ms · ${r.source}${r.ablated.length ? ` · ${headList(r.ablated)} ablated` : ""}`,
      id,
    );
  },
  onError: (e, { config }, id) => {
    errors.clear("config");
    errors.clear("executor");
    errors.clear("run");
    errors.show(kindOf(e), e);
    if (last) views.classList.add("stale");
    setStatus("error", `run ${id} on ${config.executor} failed: the views show the last good run`, id);
  },
});

function submit(): void {
  const config = form.read();
  ablation = forHeadCount(ablation, config.attention.numHeads); // another head count: the old picks mean nothing
  controller.submit({ config, loaded, ablated: ablation.heads });
}

const form = createConfigForm($("config-form") as HTMLFormElement, executorEntries, {
  onChange: submit,
  onCaseFile: async (file) => {
    try {
      const text = await file.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch (e) {
        throw new Error(`${file.name}: invalid JSON (${e instanceof Error ? e.message : String(e)})`);
      }
      loaded = parseCase(json, file.name);
      errors.clear("case");
      form.showCase(loaded);
      submit();
    } catch (e) {
      errors.show("case", e);
    }
  },
  onForgetCase: () => {
    loaded = undefined;
    form.showCase(undefined);
    submit();
  },
});

const diffView = createDiffView($("diff"), $("graph"), executorEntries, errors, () => lastDrawn);

submit();

setupTabs(
  [$("tab-inspect") as HTMLButtonElement, $("tab-train") as HTMLButtonElement, $("tab-model") as HTMLButtonElement],
  new Map([
    ["inspect", $("inspect")],
    ["train", $("train")],
    ["model", $("model")],
  ]),
);
createTrainView(
  {
    form: $("train-form") as HTMLFormElement,
    status: $("train-status"),
    errors: $("train-errors"),
    chart: $("loss-chart") as unknown as SVGSVGElement,
    heatmaps: $("train-heatmaps"),
    readout: $("train-readout"),
    explain: $("train-explain"),
  },
  executorEntries,
);
// The Model tab comes in a chunk of its own: @attngraph/models brings GPT-2's BPE ranks (js-tiktoken, ~600 kB), which
// the other tabs never need.
void import("./model-tab.js").then(
  ({ createModelTab }) =>
    createModelTab(
      {
        panel: $("model"),
        form: $("model-form") as HTMLFormElement,
        errors: $("model-errors"),
        description: $("model-description"),
        status: $("model-status"),
        tokens: $("model-tokens"),
        gridNote: $("attention-note"),
        grid: $("attention-grid"),
        readout: $("attention-readout"),
      },
      executorEntries,
    ),
  (e: unknown) => createErrorsView($("model-errors")).show("model", e),
);
