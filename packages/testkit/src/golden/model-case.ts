// A golden-models case (shared/golden-models/FORMAT.md): a model someone else wrote, its weights as a PyTorch user
// saves them (a .safetensors beside the JSON), its inputs, and what PyTorch computed — logits and loss, an output,
// greedy generation, training losses. Parsed and checked here; the weights file is read by the runner.
import { Tensor, type AnyTensor } from "@attngraph/tensor";
import { JsonChecker, type JsonObject } from "./json-check.js";

export interface ModelTraining {
  /** [steps, B, T + 1] token ids: inputs [:, :-1], targets [:, 1:]. */
  readonly batches: Tensor<"int32">;
  /** PyTorch's loss of each step, before its update. */
  readonly losses: readonly number[];
  readonly lr: number;
  readonly betas: readonly [number, number];
  readonly eps: number;
  /** Decoupled (AdamW) weight decay of the parameters of rank >= 2; the others get 0 (nanoGPT's groups). */
  readonly weightDecay: number;
  /** Global gradient-norm clipping (clip_grad_norm_), or undefined for none. */
  readonly gradClip: number | undefined;
}

export interface ModelCase {
  readonly file: string;
  readonly name: string;
  readonly source: string;
  /** The .safetensors file, as the case names it (relative to the case's folder). */
  readonly weights: string;
  /** An ONNX export of the same model, where the case has one (read by importOnnx; the model loaders read `weights`). */
  readonly onnx: string | undefined;
  /** The constructor arguments, where the case records them. */
  readonly config: JsonObject | undefined;
  /** Inputs by name: token ids and bool masks (`…_true_is_…`) as int32, float tensors as float32. */
  readonly inputs: Readonly<Record<string, AnyTensor>>;
  readonly expected: { readonly logits?: Tensor; readonly loss?: number; readonly output?: Tensor };
  readonly generate:
    | { readonly prompt: Tensor<"int32">; readonly maxNewTokens: number; readonly greedy: Tensor<"int32"> }
    | undefined;
  readonly train: ModelTraining | undefined;
  readonly tolerance: { readonly abs: number; readonly rel: number };
}

/** A models case is told apart by its weights: a file name, not tensors inline. */
export function isModelCaseJSON(json: unknown): boolean {
  return (
    typeof json === "object" &&
    json !== null &&
    !Array.isArray(json) &&
    typeof (json as JsonObject)["weights"] === "string"
  );
}

/** Inputs holding integers by their meaning: token ids, and masks in PyTorch's bool convention. */
function isIntegerInput(name: string): boolean {
  return name === "idx" || name === "targets" || /true_is|_bool$|^input_ids$/.test(name);
}

export function parseModelCase(json: unknown, file: string): ModelCase {
  const c = new JsonChecker(file);
  const root = c.object(json, "$");
  const name = c.string(c.field(root, "name", "$"), "$.name");
  const source = Object.hasOwn(root, "source") ? c.string(root["source"], "$.source") : "";
  const weights = c.string(c.field(root, "weights", "$"), "$.weights");
  if (weights.includes("..") || weights.startsWith("/"))
    c.fail(
      "$.weights",
      "the weights file must be beside the case",
      "a file name in the case's folder",
      JSON.stringify(weights),
    );
  const onnx = Object.hasOwn(root, "onnx") ? c.string(root["onnx"], "$.onnx") : undefined;
  if (onnx !== undefined && (onnx.includes("..") || onnx.startsWith("/")))
    c.fail("$.onnx", "the ONNX file must be beside the case", "a file name in the case's folder", JSON.stringify(onnx));
  const config = Object.hasOwn(root, "config") ? c.object(root["config"], "$.config") : undefined;
  const inputs: Record<string, AnyTensor> = {};
  for (const [n, v] of Object.entries(c.object(c.field(root, "inputs", "$"), "$.inputs"))) {
    const t = c.tensor(v, `$.inputs.${n}`);
    Object.defineProperty(inputs, n, {
      value: isIntegerInput(n) ? ints(c, t.data, t.shape, `$.inputs.${n}`) : Tensor.from(t.data, t.shape),
      enumerable: true,
    });
  }
  const exp = c.object(c.field(root, "expected", "$"), "$.expected");
  const expected: { logits?: Tensor; loss?: number; output?: Tensor } = {};
  for (const key of Object.keys(exp)) {
    if (key === "loss") expected.loss = c.number(exp["loss"], "$.expected.loss");
    else if (key === "logits" || key === "output") {
      const t = c.tensor(exp[key], `$.expected.${key}`);
      expected[key] = Tensor.from(t.data, t.shape);
    } else c.fail(`$.expected.${key}`, "unknown expected result", "logits, loss or output", key);
  }
  const tolerance = c.tolerance(root, 1);
  let generate: ModelCase["generate"];
  if (Object.hasOwn(root, "generate")) {
    const g = c.object(root["generate"], "$.generate");
    const prompt = c.tensor(c.field(g, "prompt", "$.generate"), "$.generate.prompt");
    const greedy = c.tensor(c.field(g, "greedy", "$.generate"), "$.generate.greedy");
    const maxNewTokens = c.number(c.field(g, "max_new_tokens", "$.generate"), "$.generate.max_new_tokens", 0);
    if (!Number.isSafeInteger(maxNewTokens))
      c.fail("$.generate.max_new_tokens", "not an integer", "an integer >= 0", String(maxNewTokens));
    generate = {
      prompt: ints(c, prompt.data, prompt.shape, "$.generate.prompt"),
      maxNewTokens,
      greedy: ints(c, greedy.data, greedy.shape, "$.generate.greedy"),
    };
  }
  const train = Object.hasOwn(root, "train") ? parseTrain(c, c.object(root["train"], "$.train")) : undefined;
  return { file, name, source, weights, onnx, config, inputs, expected, generate, train, tolerance };
}

function ints(c: JsonChecker, data: readonly number[], shape: readonly number[], path: string): Tensor<"int32"> {
  const bad = data.findIndex((v) => !Number.isInteger(v) || v < -(2 ** 31) || v >= 2 ** 31);
  if (bad >= 0)
    c.fail(`${path}.data[${bad}]`, "not an integer (ids and bool masks are integers)", "an integer", String(data[bad]));
  return Tensor.int32(data, [...shape]);
}

/**
 * The training section. Its optimizer is a sentence in the public cases ("AdamW lr 3e-3, betas (0.9, 0.95), eps 1e-8,
 * weight_decay 0.1 on every parameter of rank >= 2 …, grad-norm clipping at 1.0 …") or an object of the same fields
 * ({ lr, betas, eps, weight_decay, grad_clip }); what it leaves out is nanoGPT's default.
 */
function parseTrain(c: JsonChecker, t: JsonObject): ModelTraining {
  const b = c.tensor(c.field(t, "batches", "$.train"), "$.train.batches");
  if (b.shape.length !== 3 || b.shape[2]! < 2)
    c.fail(
      "$.train.batches.shape",
      "batches are [steps, B, T + 1]",
      "rank 3 with T + 1 >= 2",
      `[${b.shape.join(", ")}]`,
    );
  const lossesRaw = c.field(t, "losses", "$.train");
  if (!Array.isArray(lossesRaw)) c.fail("$.train.losses", "wrong type", "an array of numbers", typeof lossesRaw);
  const losses = lossesRaw.map((v, i) => c.number(v, `$.train.losses[${i}]`));
  if (losses.length !== b.shape[0])
    c.fail("$.train.losses", "one loss per batch", `${b.shape[0]} losses`, `${losses.length}`);
  const opt = c.field(t, "optimizer", "$.train");
  const spec = typeof opt === "string" ? fromSentence(c, opt) : fromObject(c, c.object(opt, "$.train.optimizer"));
  return { batches: ints(c, b.data, b.shape, "$.train.batches"), losses, ...spec };
}

type OptimizerSpec = Pick<ModelTraining, "lr" | "betas" | "eps" | "weightDecay" | "gradClip">;

const NUMBER = "([-+]?(?:\\d+\\.?\\d*|\\.\\d+)(?:[eE][-+]?\\d+)?)";

function fromSentence(c: JsonChecker, s: string): OptimizerSpec {
  if (!/adamw/i.test(s))
    c.fail(
      "$.train.optimizer",
      "unsupported optimizer",
      "AdamW (nanoGPT's configure_optimizers)",
      JSON.stringify(s.slice(0, 60)),
    );
  const num = (re: RegExp, fallback?: number): number => {
    const m = re.exec(s);
    if (m) return Number(m[1]);
    if (fallback === undefined)
      c.fail(
        "$.train.optimizer",
        `no ${re.source.split(" ")[0]} in the optimizer's description`,
        'e.g. "AdamW lr 3e-3, …"',
        JSON.stringify(s.slice(0, 60)),
      );
    return fallback;
  };
  const betas = new RegExp(`betas\\s*\\(\\s*${NUMBER}\\s*,\\s*${NUMBER}\\s*\\)`).exec(s);
  const clip = new RegExp(`clip\\w*\\s+(?:at\\s+)?${NUMBER}`).exec(s);
  return {
    lr: num(new RegExp(`lr\\s*=?\\s*${NUMBER}`)),
    betas: betas ? [Number(betas[1]), Number(betas[2])] : [0.9, 0.95],
    eps: num(new RegExp(`eps\\s*=?\\s*${NUMBER}`), 1e-8),
    weightDecay: num(new RegExp(`weight_decay\\s*=?\\s*${NUMBER}`), 0.1),
    gradClip: clip ? Number(clip[1]) : undefined,
  };
}

function fromObject(c: JsonChecker, o: JsonObject): OptimizerSpec {
  const opt = (key: string, fallback: number | undefined) =>
    Object.hasOwn(o, key) ? c.number(o[key], `$.train.optimizer.${key}`, 0) : fallback;
  const betas = Object.hasOwn(o, "betas") ? o["betas"] : [0.9, 0.95];
  if (!Array.isArray(betas) || betas.length !== 2)
    c.fail("$.train.optimizer.betas", "wrong type", "[beta1, beta2]", typeof betas);
  const lr = opt("lr", undefined);
  if (lr === undefined) c.fail("$.train.optimizer.lr", "missing field", "present", "absent");
  return {
    lr,
    betas: [
      c.number(betas[0], "$.train.optimizer.betas[0]", 0, 1),
      c.number(betas[1], "$.train.optimizer.betas[1]", 0, 1),
    ],
    eps: opt("eps", 1e-8)!,
    weightDecay: opt("weight_decay", 0.1)!,
    gradClip: opt("grad_clip", undefined),
  };
}
