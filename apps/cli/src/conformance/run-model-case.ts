// Runs a golden-models case (shared/golden-models/FORMAT.md) the way a user with that checkpoint would: loadModel on
// the .safetensors as PyTorch saved it (its own names and layout, the family read off the keys), the forward pass
// (logits and loss, or the encoder layer's output), greedy generation on the KV-cache decoder, and the training steps
// nanoGPT takes (AdamW with its parameter groups, gradient-norm clipping on the executor), and the case's ONNX export
// imported by importOnnx (model-onnx.ts), each compared with PyTorch.
import type { Model } from "@attngraph/models";
import type { Session } from "@attngraph/runtime";
import { AttnGraphError, Tensor, compare, type AnyTensor } from "@attngraph/tensor";
import type { ModelCase } from "@attngraph/testkit";
import type { CaseResult, RunCaseOptions, TensorCheck } from "./run-case.js";
import { greedyCheck } from "./model-generate.js";
import { modelCall, modelOf } from "./model-subject.js";
import { onnxChecks } from "./model-onnx.js";
import { trainingCheck } from "./model-training.js";

export async function runModelCase(c: ModelCase, options: RunCaseOptions): Promise<CaseResult> {
  const base = { file: c.file, name: c.name };
  const notes: string[] = [];
  try {
    const model = modelOf(c, { executors: options.executors });
    const checks: TensorCheck[] = [];
    try {
      checks.push(...(await forwardChecks(model, c, options)));
      // The same model as its ONNX export, imported (the file beside the weights, where the case names one).
      if (c.onnx) checks.push(...(await onnxChecks(c, options)));
      if (model.family === "gpt2") {
        if (c.generate) checks.push(await greedyCheck(model, c.generate, notes));
        if (c.train) checks.push(...(await trainingCheck(model, c, options.executors)));
      } else if (c.generate || c.train)
        throw new AttnGraphError(
          "case-format",
          `${c.file}: $.generate / $.train: only GPT-2 family cases generate or train`,
          { subject: `${c.file}` },
        );
    } finally {
      await model.dispose();
    }
    if (checks.length === 0)
      return {
        ...base,
        ok: false,
        checks,
        error: "nothing to compare: the case expects no logits, loss, output, generation or training",
      };
    return { ...base, ok: checks.every((k) => k.ok), checks, ...(notes.length ? { notes } : {}) };
  } catch (e) {
    return {
      ...base,
      ok: false,
      checks: [],
      error: AttnGraphError.isInstance(e) || e instanceof Error ? e.message : String(e),
    };
  }
}

/** The case's forward call on the model's session (every node tapped under `--tap all`: the numbers must not change). */
async function forwardChecks(model: Model, c: ModelCase, options: RunCaseOptions): Promise<TensorCheck[]> {
  const { logits, loss, output } = c.expected;
  if (!logits && loss === undefined && !output) return [];
  const { graph, inputs } = modelCall(model, c);
  const session: Session = await model.sessionOf(graph);
  const sub = options.tap === "all" ? session.tap(() => true).subscribe(() => undefined) : undefined;
  let out: Record<string, Tensor>;
  try {
    out = await session.run(inputs);
  } finally {
    sub?.unsubscribe();
  }
  const checks: TensorCheck[] = [];
  if (logits) checks.push(check("logits", out["logits"], logits, c));
  if (loss !== undefined) checks.push(check("loss", out["loss"], Tensor.from([loss], []), c));
  if (output) checks.push(check("output", out["output"], output, c));
  return checks;
}

export function check(name: string, got: AnyTensor | undefined, expected: Tensor, c: ModelCase): TensorCheck {
  if (!got)
    return {
      name,
      ok: false,
      failures: expected.size,
      size: expected.size,
      worst: undefined,
      problem: "the model gave no such output",
    };
  const r = compare(got as Tensor, expected, c.tolerance);
  return {
    name,
    ok: r.ok,
    failures: r.failures,
    size: expected.size,
    worst: r.worst,
    ...(r.shapeMismatch ? { problem: r.shapeMismatch } : {}),
  };
}
