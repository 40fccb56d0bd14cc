// A case of shared/golden-train (its FORMAT.md): a transformer block, a multi-head attention with gradients, or the
// worked example's training loop, parsed from untrusted JSON. Every failure is a CaseFormatError naming the file and the
// JSON path, as for attention cases. The kinds differ in what a runner builds, not in how the file is read: tensors by
// PyTorch state_dict name in `params`, inputs (tokens and targets are integers, everything else floats), `expected`,
// optional `expectedGrad`, and for `train` the optimizer settings.
import { Tensor, type AnyTensor } from "@attngraph/tensor";
import { MAX_TOLERANCE } from "./case.js";
import type { CaseBase } from "./case-base.js";
import { JsonChecker, pathKey, type JsonObject, type JsonTensor } from "./json-check.js";

export type TrainCaseKind = "block" | "mha-backward" | "train";
export const TRAIN_CASE_KINDS: readonly TrainCaseKind[] = ["block", "mha-backward", "train"];

/** Inputs whose values are integers (class ids): read as int32 tensors. */
const INTEGER_INPUTS: readonly string[] = ["tokens", "targets"];

/** The optimizer and loop of a `train` case. */
export interface TrainingSpec {
  readonly optimizer: "adam";
  readonly lr: number;
  readonly betas: readonly [number, number];
  readonly eps: number;
  readonly weightDecay: number;
  readonly steps: number;
  /** Every step trains on the first `batchSize` samples. */
  readonly batchSize: number;
}

/** `expectedGrad`: by parameter or input name; empty when the kind has none. */
export interface TrainCase extends CaseBase {
  readonly kind: TrainCaseKind;
  /** The config as written (its keys depend on the kind; the runner's builders check them). */
  readonly config: Readonly<Record<string, unknown>>;
  /** Parameters by PyTorch state_dict name, in PyTorch's layouts. */
  readonly params: Record<string, Tensor>;
  /** Inputs: float32, except tokens and targets (int32). */
  readonly inputs: Record<string, AnyTensor>;
  readonly training: TrainingSpec | undefined;
}

/** Whether a parsed JSON document is a golden-train case (it has a `kind`) rather than an attention case. */
export function isTrainCaseJSON(json: unknown): boolean {
  return typeof json === "object" && json !== null && !Array.isArray(json) && Object.hasOwn(json, "kind");
}

/** Checks a parsed JSON value against golden-train/FORMAT.md; throws CaseFormatError naming `file` and the field. */
export function parseTrainCase(json: unknown, file: string): TrainCase {
  const c = new JsonChecker(file);
  const root = c.object(json, "$");
  const kind = c.string(c.field(root, "kind", "$"), "$.kind");
  if (!(TRAIN_CASE_KINDS as readonly string[]).includes(kind))
    c.fail("$.kind", "unknown case kind", TRAIN_CASE_KINDS.join(", "), JSON.stringify(kind));
  const name = c.string(c.field(root, "name", "$"), "$.name");
  const source = c.string(c.field(root, "source", "$"), "$.source");
  const config = c.object(c.field(root, "config", "$"), "$.config");
  const params = tensors(c, root, "params", true);
  const inputs = tensors(c, root, "inputs", true);
  const expected = tensors(c, root, "expected", true);
  const expectedGrad = Object.hasOwn(root, "expectedGrad") ? tensors(c, root, "expectedGrad", true) : {};
  const tolerance = c.tolerance(root, MAX_TOLERANCE);
  const training =
    kind === "train" ? parseTraining(c, c.object(c.field(root, "training", "$"), "$.training")) : undefined;
  const inputTensors: Record<string, AnyTensor> = {};
  for (const [n, t] of Object.entries(inputs)) {
    const path = `$.inputs${pathKey(n)}`;
    let value: AnyTensor;
    if (INTEGER_INPUTS.includes(n)) {
      const bad = t.data.findIndex((v) => !Number.isInteger(v) || v < -(2 ** 31) || v >= 2 ** 31);
      if (bad >= 0)
        c.fail(`${path}.data[${bad}]`, "not an integer (class ids are int32)", "an integer", String(t.data[bad]));
      value = Tensor.int32(t.data, t.shape);
    } else value = Tensor.from(t.data, t.shape);
    Object.defineProperty(inputTensors, n, { value, enumerable: true, writable: true, configurable: true });
  }
  return {
    file,
    name,
    kind: kind as TrainCaseKind,
    source,
    config,
    params: floats(params),
    inputs: inputTensors,
    expected: floats(expected),
    expectedGrad: floats(expectedGrad),
    training,
    tolerance,
  };
}

function parseTraining(c: JsonChecker, t: JsonObject): TrainingSpec {
  const optimizer = c.string(c.field(t, "optimizer", "$.training"), "$.training.optimizer");
  if (optimizer !== "adam") c.fail("$.training.optimizer", "unknown optimizer", '"adam"', JSON.stringify(optimizer));
  const betas = c.field(t, "betas", "$.training");
  if (!Array.isArray(betas) || betas.length !== 2)
    c.fail(
      "$.training.betas",
      "wrong type",
      "[beta1, beta2]",
      Array.isArray(betas) ? `an array of ${betas.length}` : typeof betas,
    );
  const int = (key: string): number => {
    const v = c.number(c.field(t, key, "$.training"), `$.training.${key}`, 1);
    if (!Number.isSafeInteger(v)) c.fail(`$.training.${key}`, "not an integer", "an integer >= 1", String(v));
    return v;
  };
  return {
    optimizer,
    lr: c.number(c.field(t, "lr", "$.training"), "$.training.lr", 0),
    betas: [c.number(betas[0], "$.training.betas[0]", 0, 1), c.number(betas[1], "$.training.betas[1]", 0, 1)],
    eps: c.number(c.field(t, "eps", "$.training"), "$.training.eps", 0),
    weightDecay: c.number(c.field(t, "weightDecay", "$.training"), "$.training.weightDecay", 0),
    steps: int("steps"),
    batchSize: int("batchSize"),
  };
}

/** A field holding tensors by name (own keys only: `"__proto__"` is a name like any other, and an unknown one). */
function tensors(c: JsonChecker, root: JsonObject, key: string, required: boolean): Record<string, JsonTensor> {
  const path = `$${pathKey(key)}`;
  if (!required && !Object.hasOwn(root, key)) return {};
  const obj = c.object(c.field(root, key, "$"), path);
  return Object.fromEntries(Object.entries(obj).map(([n, v]) => [n, c.tensor(v, `${path}${pathKey(n)}`)]));
}

function floats(map: Readonly<Record<string, JsonTensor>>): Record<string, Tensor> {
  return Object.fromEntries(Object.entries(map).map(([n, t]) => [n, Tensor.from(t.data, t.shape)]));
}
