// Float64 transcriptions of torch.optim.Adam / AdamW and torch.optim.SGD (TorchAdam, TorchSGD: from PyTorch's source,
// never from an executor or optim64.ts), which the optimizer references (optim64.test.ts, sgd64.test.ts) and the
// executors' training-loop tests are checked against; the same optimizers chained from optim64's ops as a graph runs
// them (OpsAdam, OpsSGD); and a quadratic bowl's gradient to train on.
import { adamMoment64, adamStep64, sgdMomentum64, sgdStep64, type AdamStep64, type SgdStep64 } from "./optim64.js";

export interface TorchOptions {
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
export class TorchAdam {
  private step = 0;
  private beta1Power = 1;
  private beta2Power = 1;
  /** The moments (m, v) of each parameter after the last update. */
  readonly expAvg: Float64Array[];
  readonly expAvgSq: Float64Array[];

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
export class OpsAdam {
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
export function bowlGrad(
  p: Float64Array,
  centre: Float64Array,
  curvature: Float64Array,
  noise: Float64Array,
): Float64Array {
  return Float64Array.from(p, (x, i) => 2 * curvature[i]! * (x - centre[i]!) + noise[i]!);
}

export interface TorchSgdOptions {
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
export class TorchSGD {
  /** Each parameter's momentum buffer after the last update (null before the first, or without momentum). */
  readonly buffers: (Float64Array | null)[];

  constructor(
    readonly params: Float64Array[],
    private readonly o: TorchSgdOptions,
  ) {
    if (o.nesterov && (o.momentum <= 0 || o.dampening !== 0))
      throw new Error("Nesterov momentum requires a momentum and zero dampening");
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
export class OpsSGD {
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
      this.bufs[k] = sgdMomentum64(this.bufs[k]!, grads[k]!, weightDecay > 0 ? p : undefined, this.t, {
        momentum,
        dampening: this.dampening,
        weightDecay,
      });
      return sgdStep64(p, grads[k]!, this.bufs[k]!, this.a);
    });
  }
}
