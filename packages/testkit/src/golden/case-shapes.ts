// The rules between a case's config and its tensors (shared/golden/FORMAT.md, "Conventions"): which weights exist
// for which config flags, and every shape in terms of the config and the input x. Checked after each tensor passed
// its own checks, so these errors are about meaning, not syntax.
// Legend: B batch, T (= L) query length, Tkv (= S) key length, H heads, Hkv kv heads, D head dim.
import { formatShape, sameShape } from "@attngraph/tensor";
import type { AttentionConfig } from "@attngraph/attention";
import type { JsonChecker, JsonTensor } from "./json-check.js";
import { pathKey } from "./json-check.js";

type TensorMap = Readonly<Record<string, JsonTensor>>;

/** One allowed tensor: its shape, what that shape means, and whether it must be there. */
interface Slot {
  readonly shape: readonly number[];
  readonly legend: string;
  /** true: required, false: forbidden, undefined: optional. */
  readonly present: boolean | undefined;
  /** Why it is required or forbidden, for the message. */
  readonly because?: string;
}

export function checkCaseShapes(
  c: JsonChecker,
  cfg: AttentionConfig,
  weights: TensorMap,
  inputs: TensorMap,
  expected: TensorMap,
  expectedGrad: TensorMap = {},
): void {
  const x = inputs["x"];
  if (!x) c.fail("$.inputs.x", "missing input", "a tensor [B, T, dIn]", "absent");
  if (x.shape.length !== 3 || x.shape[2] !== cfg.dIn) {
    c.fail(
      "$.inputs.x.shape",
      "shape does not match the config",
      `[B, T, dIn] with dIn = ${cfg.dIn}`,
      formatShape(x.shape),
    );
  }
  const [b, t] = x.shape as [number, number, number];
  const kv = inputs["kv"];
  if (cfg.cross && kv && (kv.shape.length !== 3 || kv.shape[0] !== b || kv.shape[2] !== cfg.dIn)) {
    c.fail(
      "$.inputs.kv.shape",
      "shape does not match the config",
      `[B, Tkv, dIn] with B = ${b}, dIn = ${cfg.dIn}`,
      formatShape(kv.shape),
    );
  }
  const s = cfg.cross && kv ? kv.shape[1]! : t;
  const d = cfg.dOut / cfg.numHeads;
  const ekv = cfg.numKvHeads * d;
  const bias = `config.qkvBias is ${cfg.qkvBias}`;

  checkSlots(c, "$.inputs", inputs, {
    x: { shape: x.shape, legend: "[B, T, dIn]", present: true },
    kv: {
      shape: kv?.shape ?? [b, s, cfg.dIn],
      legend: "[B, Tkv, dIn]",
      present: cfg.cross,
      because: `config.cross is ${cfg.cross}`,
    },
    keyPaddingMask: { shape: [b, s], legend: "[B, Tkv]", present: undefined },
    // golden-grad: the output's cotangent, there exactly when gradients are expected
    gradOutput: {
      shape: [b, t, cfg.dOut],
      legend: "[B, T, dOut]",
      present: Object.keys(expectedGrad).length > 0,
      because: "expectedGrad needs it",
    },
  });
  checkSlots(c, "$.weights", weights, {
    W_query: { shape: [cfg.dOut, cfg.dIn], legend: "[dOut, dIn]", present: true },
    W_key: { shape: [ekv, cfg.dIn], legend: "[numKvHeads·headDim, dIn]", present: true },
    W_value: { shape: [ekv, cfg.dIn], legend: "[numKvHeads·headDim, dIn]", present: true },
    b_query: { shape: [cfg.dOut], legend: "[dOut]", present: cfg.qkvBias, because: bias },
    b_key: { shape: [ekv], legend: "[numKvHeads·headDim]", present: cfg.qkvBias, because: bias },
    b_value: { shape: [ekv], legend: "[numKvHeads·headDim]", present: cfg.qkvBias, because: bias },
    out_proj: {
      shape: [cfg.dOut, cfg.dOut],
      legend: "[dOut, dOut]",
      present: cfg.outProj,
      because: `config.outProj is ${cfg.outProj}`,
    },
    out_bias: {
      shape: [cfg.dOut],
      legend: "[dOut]",
      present: cfg.outBias,
      because: `config.outBias is ${cfg.outBias}`,
    },
  });
  const perHead = [b, cfg.numHeads, t, s];
  checkSlots(c, "$.expected", expected, {
    queries: { shape: [b, t, cfg.dOut], legend: "[B, T, dOut]", present: undefined },
    keys: { shape: [b, s, ekv], legend: "[B, Tkv, numKvHeads·headDim]", present: undefined },
    values: { shape: [b, s, ekv], legend: "[B, Tkv, numKvHeads·headDim]", present: undefined },
    scores: { shape: perHead, legend: "[B, numHeads, T, Tkv]", present: undefined },
    weights: { shape: perHead, legend: "[B, numHeads, T, Tkv]", present: undefined },
    context: { shape: [b, t, cfg.dOut], legend: "[B, T, dOut]", present: undefined },
    output: { shape: [b, t, cfg.dOut], legend: "[B, T, dOut]", present: undefined },
  });

  // A gradient has the shape of the tensor it belongs to; it may only name an input or weight the case has.
  const gradSlots: Record<string, Slot> = {};
  for (const [path, map] of [
    ["$.inputs", inputs],
    ["$.weights", weights],
  ] as const) {
    for (const [n, t] of Object.entries(map)) {
      if (n !== "gradOutput" && n !== "keyPaddingMask")
        gradSlots[n] = { shape: t.shape, legend: `the shape of ${path}${pathKey(n)}`, present: undefined };
    }
  }
  checkSlots(c, "$.expectedGrad", expectedGrad, gradSlots);

  const pad = inputs["keyPaddingMask"];
  pad?.data.forEach((v, i) => {
    if (v !== 0 && v !== 1)
      c.fail(`$.inputs.keyPaddingMask.data[${i}]`, "invalid padding flag", "0 (real key) or 1 (padded key)", String(v));
  });
}

/** Unknown names are errors: a typo in `expected` would otherwise silently skip a comparison. */
function checkSlots(c: JsonChecker, path: string, map: TensorMap, slots: Readonly<Record<string, Slot>>): void {
  for (const name of Object.keys(map)) {
    if (!Object.hasOwn(slots, name))
      c.fail(
        `${path}${pathKey(name)}`,
        "unknown tensor name",
        `one of ${Object.keys(slots).join(", ")}`,
        JSON.stringify(name),
      );
  }
  for (const [name, slot] of Object.entries(slots)) {
    const at = `${path}${pathKey(name)}`;
    const t = map[name];
    if (!t) {
      if (slot.present === true)
        c.fail(
          at,
          `missing${slot.because ? ` (${slot.because})` : ""}`,
          `a tensor ${formatShape(slot.shape)} (${slot.legend})`,
          "absent",
        );
      continue;
    }
    if (slot.present === false)
      c.fail(
        at,
        `not allowed (${slot.because ?? "not part of this config"})`,
        "absent",
        `a tensor ${formatShape(t.shape)}`,
      );
    if (!sameShape(t.shape, slot.shape)) {
      c.fail(
        `${at}.shape`,
        "shape does not match the config",
        `${formatShape(slot.shape)} (${slot.legend})`,
        formatShape(t.shape),
      );
    }
  }
}
