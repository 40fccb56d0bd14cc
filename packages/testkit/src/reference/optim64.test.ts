// Proves the optimizer references right without trusting their formulas: multi-step Adam, AdamW and SGD training
// loops built from adamMoment64 / adamStep64 and sgdMomentum64 / sgdStep64 (the way a lowered graph chains the ops)
// against separate, straightforward float64 transcriptions of torch.optim.Adam / AdamW (_single_tensor_adam: lerp
// for the first moment, incremental powers of β for the bias corrections) and torch.optim.SGD (_single_tensor_sgd:
// the buffer cloned from the first gradient, dampening, Nesterov, weight decay, momentum 0 without a buffer), plus
// first steps and moment / buffer updates computed by hand.
import { describe, expect, it } from "vitest";
import { AttnGraphError } from "@attngraph/tensor";
import { mulberry32 } from "../prng.js";
import { adamMoment64, adamStep64, sgdMomentum64, sgdStep64, type AdamStep64, type SgdStep64 } from "./optim64.js";

/** Seeded standard normals (Box–Muller on mulberry32). */
function normals(seed: number, n: number, scale = 1): Float64Array {
  const u = mulberry32(seed);
  return Float64Array.from({ length: n }, () => scale * Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u()));
}

/** Asserts |got − want| <= tol · (1 + |want|) elementwise, naming the worst element. */
function expectNear(got: ArrayLike<number>, want: ArrayLike<number>, tol: number, label: string): void {
  expect(got.length, `${label}: length`).toBe(want.length);
  let worst = -1;
  let worstErr = 0;
  for (let i = 0; i < want.length; i++) {
    const err = Math.abs(got[i]! - want[i]!) / (1 + Math.abs(want[i]!));
    if (!(err <= worstErr)) {
      worstErr = err;
      worst = i;
    }
  }
  expect(worstErr <= tol, `${label}: worst at ${worst}: got ${got[worst]}, expected ${want[worst]} (scaled error ${worstErr})`).toBe(true);
}

interface TorchOptions {
  readonly lr: number;
  readonly betas: readonly [number, number];
  readonly eps: number;
  readonly weight_decay: number;
}

/**
 * torch.optim.Adam (or AdamW), single-tensor path, amsgrad off, transcribed directly:
 *   step += 1
 *   AdamW: param.mul_(1 - lr * weight_decay)           Adam: grad = grad.add(param, alpha=weight_decay)
 *   exp_avg.lerp_(grad, 1 - beta1)
 *   exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
 *   bias_correction1 = 1 - beta1 ** step;  bias_correction2 = 1 - beta2 ** step
 *   denom = (exp_avg_sq.sqrt() / sqrt(bias_correction2)).add_(eps)
 *   param.addcdiv_(exp_avg, denom, value=-lr / bias_correction1)
 * Parameters are updated in place; the state lives here, as in a torch optimizer.
 */
class TorchAdam {
  private step = 0;
  private beta1Power = 1;
  private beta2Power = 1;
  private readonly expAvg: Float64Array[];
  private readonly expAvgSq: Float64Array[];

  constructor(
    readonly params: Float64Array[],
    private readonly o: TorchOptions,
    private readonly adamW: boolean,
  ) {
    this.expAvg = params.map((p) => new Float64Array(p.length));
    this.expAvgSq = params.map((p) => new Float64Array(p.length));
  }

  update(grads: readonly Float64Array[]): void {
    const { lr, eps, weight_decay: wd } = this.o;
    const [beta1, beta2] = this.o.betas;
    this.step += 1;
    this.beta1Power *= beta1;
    this.beta2Power *= beta2;
    const biasCorrection1 = 1 - this.beta1Power;
    const biasCorrection2 = 1 - this.beta2Power;
    this.params.forEach((param, k) => {
      const expAvg = this.expAvg[k]!;
      const expAvgSq = this.expAvgSq[k]!;
      for (let i = 0; i < param.length; i++) {
        let grad = grads[k]![i]!;
        if (wd !== 0) {
          if (this.adamW) param[i] = param[i]! * (1 - lr * wd);
          else grad = grad + wd * param[i]!;
        }
        expAvg[i] = expAvg[i]! + (1 - beta1) * (grad - expAvg[i]!); // lerp
        expAvgSq[i] = expAvgSq[i]! * beta2 + (1 - beta2) * grad * grad;
        const denom = Math.sqrt(expAvgSq[i]!) / Math.sqrt(biasCorrection2) + eps;
        param[i] = param[i]! - (lr / biasCorrection1) * (expAvg[i]! / denom);
      }
    });
  }
}

/**
 * The same optimizer as a graph would run it, one adam-moment (m), one adam-moment (v) and one adam-step per
 * parameter per step, each step's outputs fed to the next. Non-decoupled weight decay goes into the moments.
 */
class OpsAdam {
  private t = 0;
  readonly m: Float64Array[];
  readonly v: Float64Array[];

  constructor(
    public params: Float64Array[],
    private readonly a: AdamStep64,
  ) {
    this.m = params.map((p) => new Float64Array(p.length));
    this.v = params.map((p) => new Float64Array(p.length));
  }

  update(grads: readonly Float64Array[]): void {
    this.t += 1;
    const wd = this.a.decoupled ? 0 : this.a.weightDecay;
    this.params = this.params.map((p, k) => {
      const param = wd > 0 ? p : undefined;
      this.m[k] = adamMoment64(this.m[k]!, grads[k]!, param, { beta: this.a.beta1, square: false, weightDecay: wd });
      this.v[k] = adamMoment64(this.v[k]!, grads[k]!, param, { beta: this.a.beta2, square: true, weightDecay: wd });
      return adamStep64(p, this.m[k]!, this.v[k]!, this.t, this.a);
    });
  }
}

/** The gradient of Σ (p − c)² · s (a quadratic bowl with uneven curvature) plus seeded noise: it depends on p. */
function bowlGrad(p: Float64Array, centre: Float64Array, curvature: Float64Array, noise: Float64Array): Float64Array {
  return Float64Array.from(p, (x, i) => 2 * curvature[i]! * (x - centre[i]!) + noise[i]!);
}

describe("adamMoment64", () => {
  it("by hand: beta · state + (1 − beta) · g, g² for the second moment, g = grad + weightDecay · param", () => {
    expectNear(adamMoment64([0.5, -1], [2, 4], undefined, { beta: 0.9, square: false, weightDecay: 0 }), [0.45 + 0.2, -0.9 + 0.4], 1e-15, "first moment");
    expectNear(adamMoment64([0.5, 0], [2, -3], undefined, { beta: 0.999, square: true, weightDecay: 0 }), [0.4995 + 0.004, 0.009], 1e-15, "second moment");
    // g = 2 + 0.5 · 4 = 4 and g = -3 + 0.5 · (-2) = -4
    expectNear(adamMoment64([0.5, 0], [2, -3], [4, -2], { beta: 0.999, square: true, weightDecay: 0.5 }), [0.4995 + 0.016, 0.016], 1e-15, "second moment with weight decay");
    expectNear(adamMoment64([0.5, 0], [2, -3], [4, -2], { beta: 0.9, square: false, weightDecay: 0 }), [0.45 + 0.2, -0.3], 1e-15, "a parameter without weight decay is ignored");
    expect([...adamMoment64([7, 7], [1.5, -2], undefined, { beta: 0, square: true, weightDecay: 0 })]).toEqual([2.25, 4]);
  });

  it("refuses weight decay without the parameter and mismatched lengths", () => {
    expect(() => adamMoment64([0], [1], undefined, { beta: 0.9, square: false, weightDecay: 0.1 })).toThrow(/parameter/);
    expect(() => adamMoment64([0, 0], [1], undefined, { beta: 0.9, square: false, weightDecay: 0 })).toThrow(/elements/);
    expect(() => adamMoment64([0], [1], undefined, { beta: 1, square: false, weightDecay: 0 })).toThrow(/beta/);
  });
});

describe("adamStep64", () => {
  it("by hand: a first step moves each parameter by lr against the gradient's sign (m̂ = g, v̂ = g²)", () => {
    const g = [0.5, -4, 1e-3];
    const p = [1, -2, 0.25];
    const a = { lr: 0.1, beta1: 0.9, beta2: 0.999, eps: 0, weightDecay: 0, decoupled: false };
    const m = adamMoment64([0, 0, 0], g, undefined, { beta: 0.9, square: false, weightDecay: 0 });
    const v = adamMoment64([0, 0, 0], g, undefined, { beta: 0.999, square: true, weightDecay: 0 });
    expectNear(m, [0.05, -0.4, 1e-4], 1e-15, "m after one step");
    expectNear(v, [0.00025, 0.016, 1e-9], 1e-15, "v after one step");
    expectNear(adamStep64(p, m, v, 1, a), [0.9, -1.9, 0.15], 1e-15, "Adam's first step, eps 0");
    // eps 1e-3: p − 0.1 · g / (|g| + 1e-3)
    expectNear(adamStep64(p, m, v, 1, { ...a, eps: 1e-3 }), [1 - 0.05 / 0.501, -2 + 0.4 / 4.001, 0.25 - 1e-4 / 2e-3], 1e-14, "Adam's first step, eps 1e-3");
    // AdamW, weightDecay 0.5: p · (1 − 0.05) first
    expectNear(adamStep64(p, m, v, 1, { ...a, weightDecay: 0.5, decoupled: true }), [0.95 - 0.1, -1.9 + 0.1, 0.2375 - 0.1], 1e-15, "AdamW's first step");
    // Without `decoupled`, adam-step ignores weightDecay (it went into the moments).
    expectNear(adamStep64(p, m, v, 1, { ...a, weightDecay: 0.5 }), [0.9, -1.9, 0.15], 1e-15, "Adam ignores weightDecay in the step");
    // beta1 = beta2 = 0: no memory, bias corrections 1, step lr · m / (sqrt(v) + eps)
    expectNear(adamStep64([1], [2], [9], 7, { ...a, beta1: 0, beta2: 0, eps: 1 }), [1 - 0.1 * 0.5], 1e-15, "betas of 0");
  });

  it("by hand: a second step, bias corrections 1 − 0.9² and 1 − 0.999²", () => {
    // g1 = 0.5, g2 = -1 on p = 1, lr 0.1, eps 0
    const a = { lr: 0.1, beta1: 0.9, beta2: 0.999, eps: 0, weightDecay: 0, decoupled: false };
    const m2 = 0.9 * 0.05 + 0.1 * -1; // -0.055
    const v2 = 0.999 * 0.00025 + 0.001 * 1; // 0.00124975
    const want = 0.9 - (0.1 / 0.19) * (m2 / (Math.sqrt(v2) / Math.sqrt(0.001999)));
    expectNear(adamStep64([0.9], [m2], [v2], 2, a), [want], 1e-15, "second step");
    expect(want).toBeCloseTo(0.9366101, 6);
  });

  it("with a constant gradient every step moves by lr · g / (|g| + eps) (the bias corrections are exact)", () => {
    const a = { lr: 0.01, beta1: 0.9, beta2: 0.999, eps: 0, weightDecay: 0, decoupled: false };
    const g = [0.3, -7];
    let m: Float64Array = new Float64Array(2);
    let v: Float64Array = new Float64Array(2);
    let p: Float64Array = Float64Array.of(0, 0);
    for (let t = 1; t <= 50; t++) {
      m = adamMoment64(m, g, undefined, { beta: a.beta1, square: false, weightDecay: 0 });
      v = adamMoment64(v, g, undefined, { beta: a.beta2, square: true, weightDecay: 0 });
      p = adamStep64(p, m, v, t, a);
      expectNear(p, [-0.01 * t, 0.01 * t], 1e-13, `step ${t}`);
    }
  });

  it("refuses a step that is not an integer >= 1 with an AttnGraphError naming step", () => {
    const a = { lr: 0.1, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, decoupled: false };
    for (const t of [0, -1, 1.5, NaN, Infinity]) {
      let e: unknown;
      try {
        adamStep64([1], [1], [1], t, a);
      } catch (err) {
        e = err;
      }
      expect(AttnGraphError.isInstance(e), `step ${t}`).toBe(true);
      expect((e as Error).message, `step ${t}`).toMatch(/^step:/);
    }
    expect(adamStep64([1], [0], [0], 1e6, { ...a, eps: 1e-8 })[0]).toBe(1); // large t: beta^t underflows to 0
  });
});

describe("a training loop built from adamMoment64 and adamStep64 equals torch.optim.Adam / AdamW", () => {
  const shapes = [37, 12, 5];
  const cases: { label: string; options: TorchOptions; adamW: boolean }[] = [
    { label: "Adam, torch defaults", options: { lr: 1e-3, betas: [0.9, 0.999], eps: 1e-8, weight_decay: 0 }, adamW: false },
    { label: "Adam, weight_decay 0.1 (L2 in the gradient)", options: { lr: 0.05, betas: [0.9, 0.999], eps: 1e-8, weight_decay: 0.1 }, adamW: false },
    { label: "Adam, betas (0.5, 0.9), eps 1e-3", options: { lr: 0.02, betas: [0.5, 0.9], eps: 1e-3, weight_decay: 0 }, adamW: false },
    { label: "AdamW, torch defaults (weight_decay 0.01)", options: { lr: 1e-3, betas: [0.9, 0.999], eps: 1e-8, weight_decay: 0.01 }, adamW: true },
    { label: "AdamW, lr 0.05, weight_decay 0.3", options: { lr: 0.05, betas: [0.8, 0.99], eps: 1e-6, weight_decay: 0.3 }, adamW: true },
    { label: "AdamW, weight_decay 0 (Adam)", options: { lr: 0.05, betas: [0.9, 0.999], eps: 1e-8, weight_decay: 0 }, adamW: true },
  ];
  cases.forEach(({ label, options, adamW }, n) => {
    it(`${label}: 40 steps on a noisy quadratic, three parameters`, () => {
      const init = shapes.map((len, k) => normals(100 * n + k, len));
      const centres = shapes.map((len, k) => normals(100 * n + 10 + k, len, 2));
      const curvature = shapes.map((len, k) => normals(100 * n + 20 + k, len).map((x) => 0.1 + x * x));
      const torch = new TorchAdam(init.map((p) => Float64Array.from(p)), options, adamW);
      const ops = new OpsAdam(
        init.map((p) => Float64Array.from(p)),
        { lr: options.lr, beta1: options.betas[0], beta2: options.betas[1], eps: options.eps, weightDecay: options.weight_decay, decoupled: adamW },
      );
      let moved = 0;
      for (let t = 1; t <= 40; t++) {
        const noise = shapes.map((len, k) => normals(1000 * t + 100 * n + k, len, 0.1));
        torch.update(torch.params.map((p, k) => bowlGrad(p, centres[k]!, curvature[k]!, noise[k]!)));
        ops.update(ops.params.map((p, k) => bowlGrad(p, centres[k]!, curvature[k]!, noise[k]!)));
        ops.params.forEach((p, k) => expectNear(p, torch.params[k]!, 1e-12, `${label}: parameter ${k} after step ${t}`));
      }
      ops.params.forEach((p, k) => p.forEach((x, i) => (moved = Math.max(moved, Math.abs(x - init[k]![i]!)))));
      expect(moved, "the loop really moved the parameters").toBeGreaterThan(options.lr);
    });
  });
});

interface TorchSgdOptions {
  readonly lr: number;
  readonly momentum: number;
  readonly dampening: number;
  readonly weight_decay: number;
  readonly nesterov: boolean;
}

/**
 * torch.optim.SGD, single-tensor path, maximize off, transcribed directly:
 *   if nesterov and (momentum <= 0 or dampening != 0): raise ValueError
 *   if weight_decay != 0: grad = grad.add(param, alpha=weight_decay)
 *   if momentum != 0:
 *     if buf is None: buf = torch.clone(grad).detach()
 *     else: buf.mul_(momentum).add_(grad, alpha=1 - dampening)
 *     grad = grad.add(buf, alpha=momentum) if nesterov else buf
 *   param.add_(grad, alpha=-lr)
 * Parameters are updated in place; the buffers (None until the first step) live here, as in a torch optimizer.
 */
class TorchSGD {
  private readonly buffers: (Float64Array | null)[];

  constructor(
    readonly params: Float64Array[],
    private readonly o: TorchSgdOptions,
  ) {
    if (o.nesterov && (o.momentum <= 0 || o.dampening !== 0)) throw new Error("Nesterov momentum requires a momentum and zero dampening");
    this.buffers = params.map(() => null);
  }

  update(grads: readonly Float64Array[]): void {
    const { lr, momentum, dampening, weight_decay: wd, nesterov } = this.o;
    this.params.forEach((param, k) => {
      let grad = Float64Array.from(grads[k]!);
      if (wd !== 0) grad = grad.map((g, i) => g + wd * param[i]!);
      if (momentum !== 0) {
        let buf = this.buffers[k]!;
        if (buf === null) {
          buf = Float64Array.from(grad);
          this.buffers[k] = buf;
        } else {
          for (let i = 0; i < buf.length; i++) buf[i] = buf[i]! * momentum + (1 - dampening) * grad[i]!;
        }
        grad = nesterov ? grad.map((g, i) => g + momentum * buf[i]!) : Float64Array.from(buf);
      }
      for (let i = 0; i < param.length; i++) param[i] = param[i]! + -lr * grad[i]!;
    });
  }
}

/**
 * The same optimizer as a graph would run it: with momentum, one sgd-momentum (the buffer, the step t fed each step)
 * and one sgd-step per parameter per step, each step's outputs fed to the next; without, sgd-step alone. The buffers
 * start as NaN: step 1 must never read them.
 */
class OpsSGD {
  private t = 0;
  readonly bufs: Float64Array[];

  constructor(
    public params: Float64Array[],
    private readonly a: SgdStep64,
    private readonly dampening: number,
  ) {
    this.bufs = params.map((p) => new Float64Array(p.length).fill(NaN));
  }

  update(grads: readonly Float64Array[]): void {
    this.t += 1;
    const { momentum, weightDecay } = this.a;
    this.params = this.params.map((p, k) => {
      if (momentum === 0) return sgdStep64(p, grads[k]!, undefined, this.a);
      this.bufs[k] = sgdMomentum64(this.bufs[k]!, grads[k]!, weightDecay > 0 ? p : undefined, this.t, { momentum, dampening: this.dampening, weightDecay });
      return sgdStep64(p, grads[k]!, this.bufs[k]!, this.a);
    });
  }
}

describe("sgdMomentum64", () => {
  it("by hand: d at step 1 (the buffer not read, NaN included), momentum · buf + (1 − dampening) · d after, d = grad + weightDecay · param", () => {
    const a = { momentum: 0.9, dampening: 0.3, weightDecay: 0.5 };
    // d = 0.5 + 0.5 · 2 = 1.5 and d = -4 + 0.5 · (-1) = -4.5
    expect([...sgdMomentum64([NaN, 7], [0.5, -4], [2, -1], 1, a)]).toEqual([1.5, -4.5]);
    expect([...sgdMomentum64([Infinity, -Infinity], [0.5, -4], undefined, 1, { ...a, weightDecay: 0 })]).toEqual([0.5, -4]);
    // d = [1.5, 3.5]: 0.9 · 1 + 0.9 · 1.5 and 0.9 · (-2) + 0.9 · 3.5
    expectNear(sgdMomentum64([1, -2], [0.5, 4], [2, -1], 2, { momentum: 0.9, dampening: 0.1, weightDecay: 0.5 }), [2.25, 1.35], 1e-15, "step 2 with dampening and weight decay");
    expectNear(sgdMomentum64([1, -2], [0.5, 4], undefined, 7, { momentum: 0.9, dampening: 0, weightDecay: 0 }), [1.4, 2.2], 1e-15, "torch's defaults but momentum");
    expectNear(sgdMomentum64([1, -2], [0.5, 4], [2, -1], 7, { momentum: 0.9, dampening: 0, weightDecay: 0 }), [1.4, 2.2], 1e-15, "a parameter without weight decay is ignored");
    expectNear(sgdMomentum64([5, 5], [2, -4], undefined, 3, { momentum: 0, dampening: 0.25, weightDecay: 0 }), [1.5, -3], 1e-15, "momentum 0: (1 − dampening) · d");
    expectNear(sgdMomentum64([2, -4], [3, 3], undefined, 5, { momentum: 0.5, dampening: 1, weightDecay: 0 }), [1, -2], 1e-15, "dampening 1: momentum · buf");
    expectNear(sgdMomentum64([2, -4], [3, 3], undefined, 1, { momentum: 0.5, dampening: 1, weightDecay: 0 }), [3, 3], 1e-15, "dampening 1 at step 1: still d");
    expectNear(sgdMomentum64([1], [0.5], undefined, 1e6, { momentum: 0.9, dampening: 0, weightDecay: 0 }), [1.4], 1e-15, "a large step is any step after the first");
  });

  it("refuses weight decay without the parameter, mismatched lengths and attributes out of range", () => {
    const a = { momentum: 0.9, dampening: 0, weightDecay: 0 };
    expect(() => sgdMomentum64([0], [1], undefined, 2, { ...a, weightDecay: 0.1 })).toThrow(/parameter/);
    expect(() => sgdMomentum64([0, 0], [1], undefined, 2, a)).toThrow(/elements/);
    expect(() => sgdMomentum64([0], [1], [1, 2], 2, a)).toThrow(/elements/);
    expect(() => sgdMomentum64([0], [1], undefined, 2, { ...a, momentum: -0.1 })).toThrow(/momentum/);
    expect(() => sgdMomentum64([0], [1], undefined, 2, { ...a, dampening: 1.5 })).toThrow(/dampening/);
    expect(() => sgdMomentum64([0], [1], undefined, 2, { ...a, dampening: -0.5 })).toThrow(/dampening/);
  });

  it("refuses a step that is not an integer >= 1 with an AttnGraphError naming step", () => {
    for (const t of [0, -1, 1.5, NaN, Infinity]) {
      let e: unknown;
      try {
        sgdMomentum64([1], [1], undefined, t, { momentum: 0.9, dampening: 0, weightDecay: 0 });
      } catch (err) {
        e = err;
      }
      expect(AttnGraphError.isInstance(e), `step ${t}`).toBe(true);
      expect((e as Error).message, `step ${t}`).toMatch(/^step:/);
    }
  });
});

describe("sgdStep64", () => {
  const p = [1, -2, 0.25];
  const g = [0.5, -4, 1e-3];
  const buf = [2, -1, 0];
  const plain = { lr: 0.1, momentum: 0, nesterov: false, weightDecay: 0 };

  it("by hand: param − lr · u, u = d, buf or d + momentum · buf, d = grad + weightDecay · param", () => {
    expectNear(sgdStep64(p, g, undefined, plain), [0.95, -1.6, 0.2499], 1e-15, "plain SGD");
    // d = [1, -5, 0.126]
    expectNear(sgdStep64(p, g, undefined, { ...plain, weightDecay: 0.5 }), [0.9, -1.5, 0.2374], 1e-15, "plain SGD with weight decay");
    expectNear(sgdStep64(p, g, [NaN, NaN, NaN], plain), [0.95, -1.6, 0.2499], 1e-15, "momentum 0: a buffer given is not read");
    expectNear(sgdStep64(p, g, buf, { ...plain, momentum: 0.9 }), [0.8, -1.9, 0.25], 1e-15, "momentum: u = buf");
    expectNear(sgdStep64(p, g, buf, { ...plain, momentum: 0.9, weightDecay: 0.5 }), [0.8, -1.9, 0.25], 1e-15, "momentum: weight decay went into the buffer");
    // u = d + 0.9 · buf = [2.3, -4.9, 1e-3]
    expectNear(sgdStep64(p, g, buf, { ...plain, momentum: 0.9, nesterov: true }), [0.77, -1.51, 0.2499], 1e-15, "Nesterov");
    // u = [1, -5, 0.126] + 0.9 · buf = [2.8, -5.9, 0.126]
    expectNear(sgdStep64(p, g, buf, { ...plain, momentum: 0.9, nesterov: true, weightDecay: 0.5 }), [0.72, -1.41, 0.2374], 1e-15, "Nesterov with weight decay");
  });

  it("by hand: two steps with momentum 0.9 on g1 = 0.5, g2 = -1 from p = 1, lr 0.1 (heavy ball and Nesterov)", () => {
    for (const nesterov of [false, true]) {
      const a = { lr: 0.1, momentum: 0.9, nesterov, weightDecay: 0 };
      const m = { momentum: 0.9, dampening: 0, weightDecay: 0 };
      const b1 = sgdMomentum64([NaN], [0.5], undefined, 1, m);
      const p1 = sgdStep64([1], [0.5], b1, a);
      const b2 = sgdMomentum64(b1, [-1], undefined, 2, m);
      const p2 = sgdStep64(p1, [-1], b2, a);
      expectNear(b1, [0.5], 1e-15, "buffer after step 1");
      expectNear(b2, [-0.55], 1e-15, "buffer after step 2");
      // heavy ball: 1 − 0.05 = 0.95, then 0.95 + 0.055; Nesterov: 1 − 0.1 · 0.95 = 0.905, then 0.905 + 0.1 · 1.495
      expectNear(p1, [nesterov ? 0.905 : 0.95], 1e-15, `${nesterov ? "Nesterov" : "heavy ball"} step 1`);
      expectNear(p2, [nesterov ? 1.0545 : 1.005], 1e-15, `${nesterov ? "Nesterov" : "heavy ball"} step 2`);
    }
  });

  it("with a constant gradient the buffer is g · (1 − m^t)/(1 − m) and the parameter follows the geometric sums", () => {
    const m = 0.8;
    const g = [0.3, -7];
    const geo = (k: number): number => (1 - Math.pow(m, k)) / (1 - m);
    for (const nesterov of [false, true]) {
      const a = { lr: 0.01, momentum: m, nesterov, weightDecay: 0 };
      let b: Float64Array = new Float64Array(2).fill(NaN);
      let p: Float64Array = Float64Array.of(0, 0);
      let sum = 0;
      for (let t = 1; t <= 50; t++) {
        b = sgdMomentum64(b, g, undefined, t, { momentum: m, dampening: 0, weightDecay: 0 });
        p = sgdStep64(p, g, b, a);
        sum += nesterov ? geo(t + 1) : geo(t);
        expectNear(b, g.map((x) => x * geo(t)), 1e-13, `buffer at step ${t}`);
        expectNear(p, g.map((x) => -0.01 * x * sum), 1e-13, `${nesterov ? "Nesterov" : "heavy ball"} step ${t}`);
      }
    }
  });

  it("refuses Nesterov without momentum, momentum without the buffer, lr <= 0 and mismatched lengths", () => {
    expect(() => sgdStep64([1], [1], undefined, { ...plain, nesterov: true })).toThrow(/Nesterov/);
    expect(() => sgdStep64([1], [1], undefined, { ...plain, momentum: 0.9 })).toThrow(/buffer/);
    expect(() => sgdStep64([1], [1], undefined, { ...plain, lr: 0 })).toThrow(/lr/);
    expect(() => sgdStep64([1], [1], undefined, { ...plain, weightDecay: -1 })).toThrow(/weightDecay/);
    expect(() => sgdStep64([1, 2], [1], undefined, plain)).toThrow(/elements/);
    expect(() => sgdStep64([1], [1], [1, 2], { ...plain, momentum: 0.9 })).toThrow(/elements/);
  });
});

describe("a training loop built from sgdMomentum64 and sgdStep64 equals torch.optim.SGD", () => {
  const shapes = [37, 12, 5];
  const cases: { label: string; options: TorchSgdOptions }[] = [
    { label: "plain SGD (momentum 0, no buffer)", options: { lr: 0.02, momentum: 0, dampening: 0, weight_decay: 0, nesterov: false } },
    { label: "plain SGD, weight_decay 0.1", options: { lr: 0.02, momentum: 0, dampening: 0, weight_decay: 0.1, nesterov: false } },
    { label: "momentum 0.9", options: { lr: 0.02, momentum: 0.9, dampening: 0, weight_decay: 0, nesterov: false } },
    { label: "momentum 0.9, dampening 0.1, weight_decay 0.01", options: { lr: 0.02, momentum: 0.9, dampening: 0.1, weight_decay: 0.01, nesterov: false } },
    { label: "momentum 0.99, dampening 0.5", options: { lr: 0.01, momentum: 0.99, dampening: 0.5, weight_decay: 0, nesterov: false } },
    { label: "momentum 0.5, dampening 1 (the first gradient, decaying)", options: { lr: 0.05, momentum: 0.5, dampening: 1, weight_decay: 0, nesterov: false } },
    { label: "Nesterov, momentum 0.9, weight_decay 0.05", options: { lr: 0.02, momentum: 0.9, dampening: 0, weight_decay: 0.05, nesterov: true } },
    { label: "Nesterov, momentum 0.5", options: { lr: 0.05, momentum: 0.5, dampening: 0, weight_decay: 0, nesterov: true } },
  ];
  cases.forEach(({ label, options }, n) => {
    it(`${label}: 40 steps on a noisy quadratic, three parameters`, () => {
      const init = shapes.map((len, k) => normals(5000 + 100 * n + k, len));
      const centres = shapes.map((len, k) => normals(5000 + 100 * n + 10 + k, len, 2));
      const curvature = shapes.map((len, k) => normals(5000 + 100 * n + 20 + k, len).map((x) => 0.1 + x * x));
      const torch = new TorchSGD(init.map((p) => Float64Array.from(p)), options);
      const ops = new OpsSGD(
        init.map((p) => Float64Array.from(p)),
        { lr: options.lr, momentum: options.momentum, nesterov: options.nesterov, weightDecay: options.weight_decay },
        options.dampening,
      );
      let moved = 0;
      for (let t = 1; t <= 40; t++) {
        const noise = shapes.map((len, k) => normals(90000 + 1000 * t + 100 * n + k, len, 0.1));
        torch.update(torch.params.map((p, k) => bowlGrad(p, centres[k]!, curvature[k]!, noise[k]!)));
        ops.update(ops.params.map((p, k) => bowlGrad(p, centres[k]!, curvature[k]!, noise[k]!)));
        ops.params.forEach((p, k) => expectNear(p, torch.params[k]!, 1e-12, `${label}: parameter ${k} after step ${t}`));
        ops.params.forEach((p, k) => expect(p.every(Number.isFinite), `${label}: parameter ${k} finite after step ${t}`).toBe(true));
      }
      ops.params.forEach((p, k) => p.forEach((x, i) => (moved = Math.max(moved, Math.abs(x - init[k]![i]!)))));
      expect(moved, "the loop really moved the parameters").toBeGreaterThan(options.lr);
    });
  });

  it("torch refuses Nesterov with dampening, and so does the transcription", () => {
    expect(() => new TorchSGD([new Float64Array(1)], { lr: 0.1, momentum: 0.9, dampening: 0.1, weight_decay: 0, nesterov: true })).toThrow(/Nesterov/);
  });
});
