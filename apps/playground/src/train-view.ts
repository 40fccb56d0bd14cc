// The Train tab: the copy task trained live on the picked executor. The form (executor, steps, lr, seed) and the
// Start / Pause / Resume / Stop buttons drive a TrainController; each finished step adds a point to the loss curve and
// redraws the 4 heads' attention weights of sample 0 from the tap on the trainer's session.
import { el } from "./config-form.js";
import { MASKED_NODE, WEIGHTS_NODE } from "./copy-task.js";
import { createErrorsView, kindOf } from "./errors-view.js";
import { executorSelect } from "./executor-select.js";
import { executorsFor, type ExecutorEntry } from "./executors.js";
import { renderWeightHeatmaps } from "./heatmap.js";
import { renderLossChart } from "./loss-chart.js";
import { TrainController, type TrainState } from "./train-controller.js";
import { createCopyTrainer, type CopyTrainer } from "./train-session.js";
import { parseTrainSettings, TRAIN_DEFAULTS, type TrainSettings } from "./train-settings.js";

export interface TrainViewElements {
  readonly form: HTMLFormElement;
  readonly status: HTMLElement;
  readonly errors: HTMLElement;
  readonly chart: SVGSVGElement;
  readonly heatmaps: HTMLElement;
  readonly readout: HTMLElement;
  readonly explain: HTMLElement;
}

const WORDS: Record<TrainState, string> = {
  idle: "not started",
  starting: "compiling the training graph…",
  running: "training",
  pausing: "pausing after this step…",
  paused: "paused",
  done: "done",
  stopped: "stopped",
  error: "failed",
};

function numberInput(id: string, value: number, attrs: Record<string, string> = {}): HTMLInputElement {
  return el("input", { type: "number", id, name: id, value: String(value), ...attrs }) as HTMLInputElement;
}

function labelled(text: string, control: HTMLElement): HTMLElement {
  return el("label", {}, [el("span", {}, [text]), control]);
}

export function createTrainView(
  v: TrainViewElements,
  executors: readonly ExecutorEntry[],
): TrainController<TrainSettings, CopyTrainer> {
  const errors = createErrorsView(v.errors);
  const executor = executorSelect("train-executor", executors, TRAIN_DEFAULTS.executor);
  const steps = numberInput("train-steps", TRAIN_DEFAULTS.steps, { min: "1", step: "1" });
  const lr = numberInput("train-lr", TRAIN_DEFAULTS.lr, { min: "0", step: "any" });
  const seed = numberInput("train-seed", TRAIN_DEFAULTS.seed, { min: "0", step: "1" });
  const button = (id: string, text: string) => el("button", { type: "button", id }, [text]) as HTMLButtonElement;
  const start = button("train-start", "Start");
  const pause = button("train-pause", "Pause");
  const resume = button("train-resume", "Resume");
  const stop = button("train-stop", "Stop");
  v.form.replaceChildren(
    el("fieldset", {}, [
      el("legend", {}, ["Copy task"]),
      el("p", { class: "notes" }, [
        "SimpleTransformer (vocab 10, embed 32, 4 heads, 8 tokens) learns to copy random sequences; Adam, every step on the first 32 of 100 samples.",
      ]),
      labelled("executor", executor),
      labelled("steps", steps),
      labelled("learning rate", lr),
      labelled("seed (data, init)", seed),
    ]),
    el("div", { class: "buttons" }, [start, pause, resume, stop]),
  );

  let losses: number[] = [];
  let planned = TRAIN_DEFAULTS.steps;
  let running: TrainSettings = TRAIN_DEFAULTS;

  function showStatus(state: TrainState, step: number): void {
    const last = losses.at(-1);
    v.status.dataset.state = state;
    v.status.dataset.step = String(step);
    v.status.dataset.loss = last === undefined ? "" : String(last);
    const where = state === "idle" ? "" : ` on ${running.executor}`;
    v.status.textContent = `${WORDS[state]}${where} · step ${step} of ${planned}${last === undefined ? "" : ` · loss ${last.toFixed(4)}`}`;
    start.textContent =
      state === "idle" || state === "done" || state === "stopped" || state === "error" ? "Start" : "Restart";
    pause.disabled = state !== "starting" && state !== "running";
    resume.disabled = state !== "pausing" && state !== "paused";
    stop.disabled = !(state === "starting" || state === "running" || state === "pausing" || state === "paused");
  }

  function drawHeatmaps(trainer: CopyTrainer, step: number): void {
    const { weights, masked } = trainer.taps;
    if (!weights) return;
    // The tap holds the whole batch [32, H, T, T]; the heatmaps show sample 0's [H, T, T].
    renderWeightHeatmaps(v.heatmaps, v.readout, weights, masked, 0);
    v.heatmaps.dataset.step = String(step);
  }

  /** A new run begins (the one before has stopped and its trainer is disposed): forget its curve and heatmaps. */
  function reset(s: TrainSettings): void {
    running = s;
    planned = s.steps;
    losses = [];
    renderLossChart(v.chart, losses, planned);
    v.heatmaps.replaceChildren(
      el("p", { class: "muted" }, [
        `each head's ${WEIGHTS_NODE} of sample 0 appears after the first step (masked cells from ${MASKED_NODE})`,
      ]),
    );
    delete v.heatmaps.dataset.step;
    v.explain.textContent = "";
    showStatus(controller.state, 0);
  }

  const controller = new TrainController<TrainSettings, CopyTrainer>(
    async (s) => {
      reset(s);
      return createCopyTrainer(s, await executorsFor(s.executor));
    },
    {
      onState: showStatus,
      onStep: (step, loss, trainer) => {
        losses.push(loss);
        renderLossChart(v.chart, losses, planned);
        drawHeatmaps(trainer, step);
        showStatus(controller.state, step);
        if (step === 1) v.explain.textContent = trainer.explain();
      },
      onError: (e) => errors.show(kindOf(e), e),
    },
  );

  start.addEventListener("click", () => {
    errors.clear();
    let settings: TrainSettings;
    try {
      settings = parseTrainSettings({ executor: executor.value, steps: steps.value, lr: lr.value, seed: seed.value });
    } catch (e) {
      errors.show(kindOf(e), e);
      return;
    }
    void controller.start(settings, settings.steps);
  });
  pause.addEventListener("click", () => controller.pause());
  resume.addEventListener("click", () => controller.resume());
  stop.addEventListener("click", () => void controller.stop());

  renderLossChart(v.chart, losses, planned);
  showStatus("idle", 0);
  return controller;
}
