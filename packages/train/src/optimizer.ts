// Optimizers as graph nodes. An optimizer adds, for each parameter, the nodes that compute its new value (and its new
// state) from its gradient, and names which weight each new value replaces after the step: the session keeps them on
// the executor (compile's `updates`), so a step never sends parameters or moments through the host.
import { GraphValidationError, type GraphBuilder, type SymShape } from "@attngraph/graph";

/** What an optimizer added for one parameter. */
export interface ParamUpdate {
  /** Weight name → node: the new parameter and each piece of state. */
  readonly updates: Readonly<Record<string, string>>;
  /** State weights it declared, each starting at 0 (moments). */
  readonly state: readonly { readonly name: string; readonly shape: SymShape }[];
}

/** What the training graph hands an optimizer beside the gradient. */
export interface UpdateExtras {
  /** A one-element input holding this step's factor on the learning rate (a schedule's), fed by the trainer. */
  readonly lrScale?: string;
}

/** Hyperparameters a parameter group may set for its parameters (those the optimizer has; any other is an error). */
export interface GroupOptions {
  readonly lr?: number;
  readonly weightDecay?: number;
  readonly betas?: readonly [number, number];
  readonly eps?: number;
  readonly momentum?: number;
  readonly dampening?: number;
  readonly nesterov?: boolean;
}

export interface Optimizer {
  readonly kind: string;
  /** The learning rate (a schedule's lr is relative to it: the trainer feeds schedule(i) / lr as the factor). */
  readonly lr: number;
  /** A one-element input the trainer feeds each step: the step count t (1 first). */
  readonly stepInput: string;
  /** Declares the optimizer's state weights and adds the update nodes of `param` from its gradient `grad`. */
  addUpdate(b: GraphBuilder, param: string, grad: string, extras?: UpdateExtras): ParamUpdate;
  /**
   * This optimizer with some hyperparameters replaced: a parameter group's (torch.optim's param_groups). Each is
   * checked as the optimizer's own options are; a field this optimizer does not have is an error naming it.
   */
  withOptions(overrides: GroupOptions): Optimizer;
}

/** `base` with `overrides`, refusing fields outside `known` (a typo would otherwise be silently ignored). */
function merge<T extends object>(kind: string, base: T, overrides: GroupOptions, known: readonly string[]): T {
  if (typeof overrides !== "object" || overrides === null)
    throw new GraphValidationError(`${kind}.group`, "invalid group options", "an object", String(overrides));
  for (const [k, v] of Object.entries(overrides)) {
    if (v !== undefined && !known.includes(k))
      throw new GraphValidationError(`${kind}.${k}`, "not an option of this optimizer", known.join(", "), k);
  }
  const defined = Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined));
  return { ...base, ...defined };
}

export interface AdamOptions {
  /** Learning rate, > 0. */
  readonly lr: number;
  /** [beta1, beta2], each in [0, 1) (PyTorch's default [0.9, 0.999]). */
  readonly betas?: readonly [number, number];
  /** Added to the denominator (default 1e-8). */
  readonly eps?: number;
  /** L2 penalty (default 0): folded into the gradient (Adam), or applied to the parameter directly with `decoupled`. */
  readonly weightDecay?: number;
  /** AdamW: decoupled weight decay, param · (1 − lr · weightDecay) before the step. */
  readonly decoupled?: boolean;
}

/**
 * Adam with torch.optim.Adam's semantics (bias-corrected moments, `betas`, `eps`, `weight_decay`), AdamW with
 * `decoupled: true`. Per parameter p: state weights `<p>.adam.m` and `<p>.adam.v` (zeros), nodes `<p>.adam.m.next`,
 * `<p>.adam.v.next` (adam-moment) and `<p>.next` (adam-step). Bad options are typed errors naming the field.
 */
export function adam(options: AdamOptions): Optimizer {
  const { lr, betas = [0.9, 0.999], eps = 1e-8, weightDecay = 0, decoupled = false } = options ?? ({} as AdamOptions);
  const bad = (field: string, expected: string, got: unknown): never => {
    throw new GraphValidationError(`adam.${field}`, "invalid optimizer option", expected, String(got));
  };
  if (typeof lr !== "number" || !(lr > 0) || !Number.isFinite(lr)) bad("lr", "a finite number > 0", lr);
  if (!Array.isArray(betas) || betas.length !== 2 || !betas.every((x) => typeof x === "number" && x >= 0 && x < 1))
    bad("betas", "two numbers in [0, 1)", JSON.stringify(betas));
  if (typeof eps !== "number" || !(eps >= 0) || !Number.isFinite(eps)) bad("eps", "a finite number >= 0", eps);
  if (typeof weightDecay !== "number" || !(weightDecay >= 0) || !Number.isFinite(weightDecay))
    bad("weightDecay", "a finite number >= 0", weightDecay);
  const [beta1, beta2] = betas;
  const stepInput = "adam.step";
  return {
    kind: "adam",
    lr,
    stepInput,
    withOptions: (overrides) => adam(merge("adam", options, overrides, ["lr", "weightDecay", "betas", "eps"])),
    addUpdate(b, param, grad, extras = {}) {
      const shape = b.shapeOf(param);
      const m = b.weight(`${param}.adam.m`, shape);
      const v = b.weight(`${param}.adam.v`, shape);
      // Adam folds weight decay into the gradient of both moments; AdamW applies it to the parameter in the step.
      const folded = decoupled || weightDecay === 0 ? {} : { param };
      const wd = decoupled ? 0 : weightDecay;
      const mNext = b.add(
        "adam-moment",
        `${param}.adam.m.next`,
        { state: m, grad, ...folded },
        { beta: beta1, square: false, weightDecay: wd },
      );
      const vNext = b.add(
        "adam-moment",
        `${param}.adam.v.next`,
        { state: v, grad, ...folded },
        { beta: beta2, square: true, weightDecay: wd },
      );
      const lrScale = extras.lrScale ? { lrScale: extras.lrScale } : {};
      const next = b.add(
        "adam-step",
        `${param}.next`,
        { param, m: mNext, v: vNext, step: stepInput, ...lrScale },
        { lr, beta1, beta2, eps, weightDecay, decoupled },
      );
      return {
        updates: { [param]: next, [m]: mNext, [v]: vNext },
        state: [
          { name: m, shape },
          { name: v, shape },
        ],
      };
    },
  };
}

export interface SgdOptions {
  /** Learning rate, > 0. */
  readonly lr: number;
  /** Momentum factor (default 0: plain SGD, no buffer). */
  readonly momentum?: number;
  /** Dampening of the momentum (default 0). */
  readonly dampening?: number;
  /** Nesterov momentum (needs momentum > 0 and dampening 0, as PyTorch requires). */
  readonly nesterov?: boolean;
  /** L2 penalty folded into the gradient (default 0). */
  readonly weightDecay?: number;
}

/**
 * SGD with torch.optim.SGD's semantics (momentum with its first-step clone, dampening, Nesterov, weight decay). With
 * momentum, per parameter p: a state weight `<p>.sgd.buf` (zeros) and nodes `<p>.sgd.buf.next` (sgd-momentum) and
 * `<p>.next` (sgd-step); without, only `<p>.next`.
 */
export function sgd(options: SgdOptions): Optimizer {
  const { lr, momentum = 0, dampening = 0, nesterov = false, weightDecay = 0 } = options ?? ({} as SgdOptions);
  const bad = (field: string, expected: string, got: unknown): never => {
    throw new GraphValidationError(`sgd.${field}`, "invalid optimizer option", expected, String(got));
  };
  if (typeof lr !== "number" || !(lr > 0) || !Number.isFinite(lr)) bad("lr", "a finite number > 0", lr);
  if (typeof momentum !== "number" || !(momentum >= 0) || !Number.isFinite(momentum))
    bad("momentum", "a finite number >= 0", momentum);
  if (typeof dampening !== "number" || !(dampening >= 0 && dampening <= 1))
    bad("dampening", "a number in [0, 1]", dampening);
  if (typeof weightDecay !== "number" || !(weightDecay >= 0) || !Number.isFinite(weightDecay))
    bad("weightDecay", "a finite number >= 0", weightDecay);
  if (nesterov && (momentum === 0 || dampening !== 0))
    bad("nesterov", "momentum > 0 and dampening 0 (PyTorch's rule)", `momentum ${momentum}, dampening ${dampening}`);
  const stepInput = "sgd.step";
  return {
    kind: "sgd",
    lr,
    stepInput,
    withOptions: (overrides) =>
      sgd(merge("sgd", options, overrides, ["lr", "weightDecay", "momentum", "dampening", "nesterov"])),
    addUpdate(b, param, grad, extras = {}) {
      const shape = b.shapeOf(param);
      const decay = weightDecay > 0 ? { param } : {};
      const lrScale = extras.lrScale ? { lrScale: extras.lrScale } : {};
      if (momentum === 0) {
        const next = b.add(
          "sgd-step",
          `${param}.next`,
          { param, grad, ...lrScale },
          { lr, momentum: 0, nesterov: false, weightDecay },
        );
        return { updates: { [param]: next }, state: [] };
      }
      const buf = b.weight(`${param}.sgd.buf`, shape);
      const bufNext = b.add(
        "sgd-momentum",
        `${param}.sgd.buf.next`,
        { buf, grad, ...decay, step: stepInput },
        { momentum, dampening, weightDecay },
      );
      const next = b.add(
        "sgd-step",
        `${param}.next`,
        { param, grad, buf: bufNext, ...lrScale },
        { lr, momentum, nesterov, weightDecay },
      );
      return { updates: { [param]: next, [buf]: bufNext }, state: [{ name: buf, shape }] };
    },
  };
}
