// A golden-models case's ONNX file (`onnx` in its JSON), imported by importOnnx for the case's input shapes and run on
// the conformance executors: each expected tensor (logits or output, and the loss where the file outputs one) compared
// with what the imported graph's output of that name gives (or its only output). The .safetensors path of the same case is checked beside it.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { importOnnx, type ImportedOnnx } from "@attngraph/onnx";
import { compile } from "@attngraph/runtime";
import { AttnGraphError, Tensor, type AnyTensor } from "@attngraph/tensor";
import type { ModelCase } from "@attngraph/testkit";
import type { RunCaseOptions, TensorCheck } from "./run-case.js";
import { check } from "./run-model-case.js";

/** The case's ONNX file imported for the shapes of the case's inputs. */
export function importCaseOnnx(c: ModelCase): ImportedOnnx {
  const bytes = readFileSync(join(dirname(c.file), c.onnx!));
  return importOnnx(bytes, { shapes: Object.fromEntries(Object.entries(c.inputs).map(([k, t]) => [k, t.shape])) });
}

/** The imported graph's inputs, fed from the case's inputs of the same names. */
export function onnxInputs(imported: ImportedOnnx, c: ModelCase): Record<string, AnyTensor> {
  const inputs: Record<string, AnyTensor> = {};
  for (const i of imported.inputs) {
    const t = Object.hasOwn(c.inputs, i.name) ? c.inputs[i.name] : undefined;
    if (!t)
      throw new AttnGraphError(
        "case-format",
        `${c.file}: $.inputs.${i.name}: the ONNX file's input ${i.name} (${i.onnxType}) has no value in the case`,
        { subject: `$.inputs.${i.name}` },
      );
    if (t.dtype !== i.dtype)
      throw new AttnGraphError(
        "case-format",
        `${c.file}: $.inputs.${i.name}: the ONNX input is ${i.onnxType}, the case gives ${t.dtype === "int32" ? "integers" : "floats"}`,
        { subject: `$.inputs.${i.name}` },
      );
    inputs[i.name] = t;
  }
  return inputs;
}

export async function onnxChecks(c: ModelCase, options: RunCaseOptions): Promise<TensorCheck[]> {
  const imported = importCaseOnnx(c);
  const session = await compile(imported.graph, { executors: options.executors, weights: imported.weights });
  let out: Record<string, Tensor>;
  try {
    const sub = options.tap === "all" ? session.tap(() => true).subscribe(() => undefined) : undefined;
    try {
      out = await session.run(onnxInputs(imported, c));
    } finally {
      sub?.unsubscribe();
    }
  } finally {
    await session.dispose();
  }
  const checks: TensorCheck[] = [];
  const only = imported.outputs.length === 1 ? imported.outputs[0] : undefined;
  for (const name of ["logits", "output"] as const) {
    const expected = c.expected[name];
    if (!expected) continue;
    const got = out[name] ?? (only ? out[only] : undefined);
    checks.push({
      ...check(`onnx ${name}`, got, expected, c),
      ...(got ? {} : { problem: `the ONNX file has no output ${name} (outputs: ${imported.outputs.join(", ")})` }),
    });
  }
  // A file exported with its loss (nanoGPT's forward with targets) has a loss output: compared too.
  if (c.expected.loss !== undefined && imported.outputs.includes("loss"))
    checks.push(check("onnx loss", out["loss"], Tensor.from([c.expected.loss], []), c));
  if (checks.length === 0)
    throw new AttnGraphError(
      "case-format",
      `${c.file}: $.expected: nothing to compare the ONNX file's outputs with (logits or output)`,
      { subject: "$.expected" },
    );
  return checks;
}
