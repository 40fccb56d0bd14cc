// A golden case (shared/golden/FORMAT.md) parsed from untrusted JSON. Every field is checked, and every failure is a
// CaseFormatError naming the file and the JSON path, so a conformance run over a folder of cases points at the exact
// broken number instead of crashing with a TypeError.
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { normalizeConfig, type AttentionConfig } from "@attngraph/attention";
import type { CaseBase } from "./case-base.js";
import { checkCaseShapes } from "./case-shapes.js";
import { JsonChecker, pathKey, type JsonObject, type JsonTensor } from "./json-check.js";

export interface GoldenCase extends CaseBase {
  /** Normalized: every key present. */
  readonly config: AttentionConfig;
  /** W_query, W_key, W_value, b_query, b_key, b_value, out_proj, out_bias (nn.Linear layout [out, in]). */
  readonly weights: Record<string, Tensor>;
  /** x [B, T, dIn]; kv [B, Tkv, dIn] when cross; keyPaddingMask [B, Tkv] (1 = padded key). */
  readonly inputs: Record<string, Tensor>;
  /**
   * `expected`: any of queries, keys, values, scores, weights, context, output; compare the ones present.
   * `expectedGrad`: golden-grad cases (shared/golden-grad/README.md): gradients of L = sum(output ⊙ gradOutput) by input
   * or weight name (x, kv, W_query, …); empty for a forward-only case. `gradOutput` is kept apart from `inputs`, which
   * are what a forward run is fed.
   */
  readonly gradOutput: Tensor | undefined;
}

/**
 * The loosest tolerance a case may ask for. Attention weights lie in [0, 1] and the loosest real cases (4-decimal prints)
 * need 2e-3, so anything above this would let a wrong kernel pass: a typo such as `"abs": 1e4`, not a choice.
 */
export const MAX_TOLERANCE = 0.05;

/** Checks a parsed JSON value against the golden format; throws CaseFormatError naming `file` and the field. */
export function parseCase(json: unknown, file: string): GoldenCase {
  const c = new JsonChecker(file);
  const root = c.object(json, "$");
  const name = c.string(c.field(root, "name", "$"), "$.name");
  const source = c.string(c.field(root, "source", "$"), "$.source");
  const config = parseConfig(c, c.field(root, "config", "$"));
  const weights = tensorMap(c, root, "weights");
  const inputs = tensorMap(c, root, "inputs");
  const expected = tensorMap(c, root, "expected");
  const expectedGrad = Object.hasOwn(root, "expectedGrad") ? tensorMap(c, root, "expectedGrad") : {};
  const tolerance = c.tolerance(root, MAX_TOLERANCE);
  checkCaseShapes(c, config, weights, inputs, expected, expectedGrad);
  const { gradOutput, ...forward } = inputs;
  return {
    file,
    name,
    source,
    config,
    weights: toTensors(weights),
    inputs: toTensors(forward),
    expected: toTensors(expected),
    expectedGrad: toTensors(expectedGrad),
    gradOutput: gradOutput && Tensor.from(gradOutput.data, gradOutput.shape),
    tolerance,
  };
}

function parseConfig(c: JsonChecker, raw: unknown): AttentionConfig {
  const obj = c.object(raw, "$.config");
  let config: AttentionConfig;
  try {
    config = normalizeConfig(obj);
  } catch (e) {
    if (!AttnGraphError.isInstance(e) || e.code !== "config")
      c.fail("$.config", "invalid config", undefined, String(e), e);
    // ConfigError names `config.<key>`; restate it as a JSON path and keep the original as the cause.
    const key = e.subject?.replace(/^config\.?/, "") ?? "";
    const tail = `${e.expected === undefined ? "" : `, expected ${e.expected}`}${e.got === undefined ? "" : `, got ${e.got}`}`;
    let what = e.message.replace(/^[^:]*: /, "");
    if (tail && what.endsWith(tail)) what = what.slice(0, -tail.length);
    c.fail(key ? `$.config${pathKey(key)}` : "$.config", what, e.expected, e.got, e);
  }
  // The reference and the runners compute inference only; a case with dropout could not be reproduced.
  if (config.dropout !== 0) c.fail("$.config.dropout", "golden cases are inference", "0", String(config.dropout));
  return config;
}

// Both maps are built with Object.fromEntries, which defines own properties. JSON.parse gives `"__proto__"` an own key;
// `out[name] = ...` on a `{}` would instead set the prototype, hiding the entry from the unknown-name check.
function tensorMap(c: JsonChecker, root: JsonObject, key: string): Record<string, JsonTensor> {
  const path = `$${pathKey(key)}`;
  const obj = c.object(c.field(root, key, "$"), path);
  return Object.fromEntries(Object.entries(obj).map(([name, v]) => [name, c.tensor(v, `${path}${pathKey(name)}`)]));
}

function toTensors(map: Readonly<Record<string, JsonTensor>>): Record<string, Tensor> {
  return Object.fromEntries(Object.entries(map).map(([name, t]) => [name, Tensor.from(t.data, t.shape)]));
}
