// A case of shared/golden-flex (its FORMAT.md): an attention variant as a score and a mask modification (expressions,
// kept as JSON for the graph to check), the core's inputs (q, k, v in heads layout, and the tensors the expressions
// gather), the expected output (and weights for small cases), the output's gradient and the expected gradients.
import { Tensor, type Tolerance } from "@attngraph/tensor";
import { MAX_TOLERANCE } from "./case.js";
import { JsonChecker, pathKey } from "./json-check.js";

export interface FlexCase {
  readonly file: string;
  readonly name: string;
  readonly doc: string;
  readonly numHeads: number;
  readonly numKvHeads: number;
  /** null: 1/√D. */
  readonly scale: number | null;
  /** The expressions as written (null: none); @attngraph/graph's checkExpr checks them where the graph is built. */
  readonly scoreMod: unknown;
  readonly maskMod: unknown;
  /** q, k, v [B, H(kv), L(S), D], and each gathered input by name. */
  readonly inputs: Record<string, Tensor>;
  /** Gathered inputs whose gradients are expected. */
  readonly learnable: readonly string[];
  readonly expected: Record<string, Tensor>;
  readonly gradOutput: Tensor | undefined;
  readonly expectedGrad: Record<string, Tensor>;
  readonly tolerance: Tolerance;
}

/** Whether a parsed JSON document is a golden-flex case (it has `scoreMod` or `maskMod` beside `attention`). */
export function isFlexCaseJSON(json: unknown): boolean {
  return (
    typeof json === "object" &&
    json !== null &&
    !Array.isArray(json) &&
    Object.hasOwn(json, "attention") &&
    (Object.hasOwn(json, "scoreMod") || Object.hasOwn(json, "maskMod"))
  );
}

export function parseFlexCase(json: unknown, file: string): FlexCase {
  const c = new JsonChecker(file);
  const root = c.object(json, "$");
  const name = c.string(c.field(root, "name", "$"), "$.name");
  const doc = Object.hasOwn(root, "doc") ? c.string(root["doc"], "$.doc") : "";
  const attention = c.object(c.field(root, "attention", "$"), "$.attention");
  const numHeads = int(c, c.field(attention, "numHeads", "$.attention"), "$.attention.numHeads");
  const numKvHeads = Object.hasOwn(attention, "numKvHeads")
    ? int(c, attention["numKvHeads"], "$.attention.numKvHeads")
    : numHeads;
  if (numHeads % numKvHeads !== 0)
    c.fail("$.attention.numKvHeads", "must divide numHeads", `a divisor of ${numHeads}`, String(numKvHeads));
  const rawScale = Object.hasOwn(attention, "scale") ? attention["scale"] : null;
  const scale = rawScale === null ? null : c.number(rawScale, "$.attention.scale");
  const scoreMod = Object.hasOwn(root, "scoreMod") ? root["scoreMod"] : null;
  const maskMod = Object.hasOwn(root, "maskMod") ? root["maskMod"] : null;
  const inputs = tensors(c, root, "inputs");
  for (const required of ["q", "k", "v"])
    if (!Object.hasOwn(inputs, required)) c.fail(`$.inputs.${required}`, "missing field", "present", "absent");
  for (const n of ["q", "k", "v"])
    if (inputs[n]!.shape.length !== 4)
      c.fail(`$.inputs.${n}.shape`, "wrong rank", "[B, H, L, D]", `[${inputs[n]!.shape.join(", ")}]`);
  const learnableRaw = Object.hasOwn(root, "learnable") ? root["learnable"] : [];
  if (!Array.isArray(learnableRaw)) c.fail("$.learnable", "wrong type", "a list of input names", typeof learnableRaw);
  const learnable = (learnableRaw as unknown[]).map((n, i) => {
    const s = c.string(n, `$.learnable[${i}]`);
    if (!Object.hasOwn(inputs, s) || ["q", "k", "v"].includes(s))
      c.fail(
        `$.learnable[${i}]`,
        "not a gathered input of the case",
        "the name of an input other than q, k, v",
        JSON.stringify(s),
      );
    return s;
  });
  const expected = tensors(c, root, "expected");
  const gradOutput = Object.hasOwn(root, "gradOutput") ? floatTensor(c, root["gradOutput"], "$.gradOutput") : undefined;
  const expectedGrad = Object.hasOwn(root, "expectedGrad") ? tensors(c, root, "expectedGrad") : {};
  if (Object.keys(expectedGrad).length && !gradOutput)
    c.fail("$.gradOutput", "missing field", "the output's gradient (expectedGrad is given)", "absent");
  const tolerance = c.tolerance(root, MAX_TOLERANCE);
  return {
    file,
    name,
    doc,
    numHeads,
    numKvHeads,
    scale,
    scoreMod,
    maskMod,
    inputs,
    learnable,
    expected,
    gradOutput,
    expectedGrad,
    tolerance,
  };
}

function int(c: JsonChecker, v: unknown, path: string): number {
  const n = c.number(v, path, 1);
  if (!Number.isSafeInteger(n)) c.fail(path, "not an integer", "an integer >= 1", String(n));
  return n;
}

function floatTensor(c: JsonChecker, v: unknown, path: string): Tensor {
  const t = c.tensor(v, path);
  return Tensor.from(t.data, t.shape);
}

/** A field holding tensors by name (own keys only). */
function tensors(c: JsonChecker, root: Readonly<Record<string, unknown>>, key: string): Record<string, Tensor> {
  const path = `$${pathKey(key)}`;
  const obj = c.object(c.field(root, key, "$"), path);
  const out: Record<string, Tensor> = {};
  for (const [n, v] of Object.entries(obj))
    Object.defineProperty(out, n, {
      value: floatTensor(c, v, `${path}${pathKey(n)}`),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return out;
}
