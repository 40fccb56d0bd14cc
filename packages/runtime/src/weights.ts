// The session's weights and their copies on executors. The rule (the same on every executor): weights are copied when
// the session is compiled, so changing the caller's arrays afterwards changes nothing; the only way to change them is
// `session.setWeights()`, which every executor sees from the next run on. Without the copy, cpu (which computes on the
// host tensor itself) would see a change that wasm and webgpu (which keep their first upload) never see.
import type { Executor } from "@attngraph/graph";
import type { AnyTensor, Shape } from "@attngraph/tensor";

/** One weight's value and its uploads. Runs hold it while they run; a replaced weight is released by its last run. */
class WeightEntry {
  readonly tensor: AnyTensor;
  readonly #uploads = new Map<Executor, Promise<unknown>>();
  #users = 0;
  #retired = false;

  constructor(tensor: AnyTensor) {
    this.tensor = tensor;
  }

  on(executor: Executor): Promise<unknown> {
    let v = this.#uploads.get(executor);
    if (!v) {
      v = Promise.resolve().then(() => executor.upload(this.tensor));
      this.#uploads.set(executor, v);
    }
    return v;
  }

  hold(): void {
    this.#users++;
  }

  letGo(): void {
    if (--this.#users === 0 && this.#retired) void this.#free();
  }

  /**
   * No new run will use this entry; its uploads go back to their executors once the runs using it are done. Resolves
   * when what could be released now has been.
   */
  retire(): Promise<void> {
    this.#retired = true;
    return this.#users === 0 ? this.#free() : Promise.resolve();
  }

  async #free(): Promise<void> {
    const uploads = [...this.#uploads];
    this.#uploads.clear();
    // An upload that failed has nothing to give back.
    await Promise.all(uploads.map(([executor, v]) => v.then((value) => executor.release?.(value), () => undefined)));
  }
}

/** The weights one run uses, fixed when it starts: a later `setWeights()` does not change a run in flight. */
export interface WeightLease {
  on(name: string, executor: Executor): Promise<unknown>;
  release(): void;
}

export class WeightStore {
  readonly #entries = new Map<string, WeightEntry>();

  /** Copies every tensor (dense): the caller's arrays are theirs to change. */
  constructor(weights: ReadonlyMap<string, AnyTensor>) {
    for (const [name, t] of weights) this.#entries.set(name, new WeightEntry(t.clone()));
  }

  shapes(): Record<string, Shape> {
    const out: Record<string, Shape> = Object.create(null) as Record<string, Shape>;
    for (const [name, e] of this.#entries) out[name] = e.tensor.shape;
    return out;
  }

  has(name: string): boolean {
    return this.#entries.has(name);
  }

  /** Copies of the current values (the caller may change them freely). */
  values(): Map<string, AnyTensor> {
    return new Map([...this.#entries].map(([name, e]) => [name, e.tensor.clone()]));
  }

  /** Replaces some weights (already checked by the caller); runs in flight keep the values they started with. */
  replace(weights: ReadonlyMap<string, AnyTensor>): void {
    for (const [name, t] of weights) {
      void this.#entries.get(name)?.retire();
      this.#entries.set(name, new WeightEntry(t.clone()));
    }
  }

  lease(): WeightLease {
    const held = new Map(this.#entries);
    for (const e of held.values()) e.hold();
    let released = false;
    return {
      on: (name, executor) => held.get(name)!.on(executor),
      release: () => {
        if (released) return;
        released = true;
        for (const e of held.values()) e.letGo();
      },
    };
  }

  /** The session is going away: every upload is released now (awaited), or by the last run still using it. */
  async dispose(): Promise<void> {
    const entries = [...this.#entries.values()];
    this.#entries.clear();
    await Promise.all(entries.map((e) => e.retire()));
  }
}
