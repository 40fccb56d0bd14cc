// The kernels one executor has, by op kind: the registration rules of the executor contract in one place. A kernel
// arrives only by an explicit `register` call (never as an import side effect), and a second kernel for the same op on
// the same executor is an error, since replacing one silently would hide which one runs.
import { AttnGraphError, describe } from "@attngraph/tensor";
import type { Support } from "./executor-contract.js";

const OK: Support = Object.freeze({ ok: true });

export class KernelTable<K> {
  readonly #kernels = new Map<string, K>();

  /**
   * @param executor the executor's name, for error messages
   * @param signature the kernel's expected form in words, for error messages, e.g. "(call) => Tensor"
   */
  constructor(
    readonly executor: string,
    readonly signature: string,
  ) {}

  register(kind: string, kernel: K): void {
    if (typeof kind !== "string" || kind.length === 0) {
      const subject = `executor ${this.executor}`;
      throw new AttnGraphError(
        "invalid-kernel",
        describe(subject, "op kind must be a non-empty string", "a string", String(kind)),
        { subject },
      );
    }
    const subject = `op ${kind}`;
    if (typeof kernel !== "function") {
      throw new AttnGraphError(
        "invalid-kernel",
        describe(subject, `kernel for executor ${this.executor} must be a function`, this.signature, typeof kernel),
        {
          subject,
          expected: this.signature,
          got: typeof kernel,
        },
      );
    }
    if (this.#kernels.has(kind)) {
      const expected = "one kernel per op and executor";
      const got = "a second registration";
      throw new AttnGraphError(
        "duplicate-kernel",
        describe(subject, `a kernel is already registered on executor ${this.executor}`, expected, got),
        {
          subject,
          expected,
          got,
        },
      );
    }
    this.#kernels.set(kind, kernel);
  }

  get(kind: string): K | undefined {
    return this.#kernels.get(kind);
  }

  /** Never throws: whether a kernel is registered for `kind`. */
  supports(kind: string): Support {
    return this.#kernels.has(kind) ? OK : { ok: false, reason: `no kernel for op ${String(kind)}` };
  }
}
