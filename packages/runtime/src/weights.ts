// The session's weights and their copies on executors. The rule (the same on every executor): weights are copied when
// the session is compiled, so changing the caller's arrays afterwards changes nothing; the ways to change them are
// `session.setWeights()`, which every executor sees from the next run on, and a run's `updates` (compile option),
// which make a node's value the weight's new value where it was computed, with no trip through the host. Without the
// copy, cpu (which computes on the host tensor itself) would see a change that wasm and webgpu (which keep their first
// upload) never see.
import type { Executor } from "@attngraph/graph";
import type { AnyTensor, Shape } from "@attngraph/tensor";

/** A value that lives on an executor (a run's kept result): the weight has no host copy until one is read. */
export interface Resident {
  readonly executor: Executor;
  readonly value: unknown;
}

/** One weight's value and its uploads. Runs hold it while they run; a replaced weight is released by its last run. */
class WeightEntry {
  readonly shape: Shape;
  #tensor: AnyTensor | undefined;
  #reading: Promise<AnyTensor> | undefined;
  readonly #home: Resident | undefined;
  readonly #uploads = new Map<Executor, Promise<unknown>>();
  /** The uploads that have settled: what a run's step reads without awaiting (one microtask less per weight per step). */
  readonly #ready = new Map<Executor, { readonly value: unknown }>();
  #users = 0;
  #retired = false;

  constructor(source: { tensor: AnyTensor } | { resident: Resident; shape: Shape }) {
    if ("tensor" in source) {
      this.#tensor = source.tensor;
      this.shape = source.tensor.shape;
    } else {
      this.#home = source.resident;
      this.shape = source.shape;
      // Its own upload on the executor that computed it: released with the entry like any other.
      this.#uploads.set(source.resident.executor, Promise.resolve(source.resident.value));
      this.#ready.set(source.resident.executor, { value: source.resident.value });
    }
  }

  /** The host value, when there is one without reading an executor. */
  get tensor(): AnyTensor | undefined {
    return this.#tensor;
  }

  /** The host value, downloaded once from the executor that holds it when there is no host copy yet. */
  read(): Promise<AnyTensor> {
    if (this.#tensor) return Promise.resolve(this.#tensor);
    this.#reading ??= Promise.resolve()
      .then(() => this.#home!.executor.download(this.#home!.value))
      .then(
        (t) => (this.#tensor = t.clone()),
        (e: unknown) => {
          this.#reading = undefined; // a failed read is not remembered: the next one tries again
          throw e;
        },
      );
    return this.#reading;
  }

  on(executor: Executor): Promise<unknown> {
    let v = this.#uploads.get(executor);
    if (!v) {
      const upload = this.read().then((t) => executor.upload(t));
      v = upload;
      this.#uploads.set(executor, upload);
      // Remembered only while it is still this entry's upload (not freed in the meantime).
      upload.then(
        (value) => this.#uploads.get(executor) === upload && this.#ready.set(executor, { value }),
        () => undefined,
      );
    }
    return v;
  }

  /** The upload on `executor` when it has settled, else undefined (then `on()` is the way). */
  ready(executor: Executor): { readonly value: unknown } | undefined {
    return this.#ready.get(executor); // the same object every run: nothing allocated per step
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
    // A read of a resident value in flight must finish before the value goes back to its executor.
    await this.#reading?.catch(() => undefined);
    const uploads = [...this.#uploads];
    this.#uploads.clear();
    this.#ready.clear();
    // An upload that failed has nothing to give back.
    await Promise.all(
      uploads.map(([executor, v]) =>
        v.then(
          (value) => executor.release?.(value),
          () => undefined,
        ),
      ),
    );
  }
}

/** The weights one run uses, fixed when it starts: a later `setWeights()` does not change a run in flight. */
export interface WeightLease {
  on(name: string, executor: Executor): Promise<unknown>;
  /** The weight's settled upload on `executor`, or undefined (see WeightEntry.ready). */
  ready(name: string, executor: Executor): { readonly value: unknown } | undefined;
  release(): void;
}

export class WeightStore {
  readonly #entries = new Map<string, WeightEntry>();

  /**
   * Copies every tensor (snapshot: a memcpy of the span when the layout is dense in some axis order, so a checkpoint's
   * transposed view is copied as it lies, not reordered): the caller's arrays are theirs to change.
   */
  constructor(weights: ReadonlyMap<string, AnyTensor>) {
    for (const [name, t] of weights) this.#entries.set(name, new WeightEntry({ tensor: t.snapshot() }));
  }

  shapes(): Record<string, Shape> {
    const out: Record<string, Shape> = Object.create(null) as Record<string, Shape>;
    for (const [name, e] of this.#entries) out[name] = e.shape;
    return out;
  }

  has(name: string): boolean {
    return this.#entries.has(name);
  }

  /** The names of weights whose current value lives only on an executor (no host copy read yet). */
  resident(): string[] {
    return [...this.#entries].filter(([, e]) => e.tensor === undefined).map(([name]) => name);
  }

  /** Copies of the current values (the caller may change them freely); every weight must have a host copy. */
  values(): Map<string, AnyTensor> {
    return new Map([...this.#entries].map(([name, e]) => [name, e.tensor!.clone()]));
  }

  /** Copies of the current values, downloading those that live only on an executor. */
  async read(): Promise<Map<string, AnyTensor>> {
    const entries = [...this.#entries];
    const tensors = await Promise.all(entries.map(([, e]) => e.read()));
    return new Map(entries.map(([name], i) => [name, tensors[i]!.clone()]));
  }

  /** Replaces some weights (already checked by the caller); runs in flight keep the values they started with. */
  replace(weights: ReadonlyMap<string, AnyTensor>): void {
    for (const [name, t] of weights) this.#swap(name, new WeightEntry({ tensor: t.snapshot() }));
  }

  /** Makes values a run computed (and kept) the weights' new values, where they are: nothing is copied. */
  assign(values: ReadonlyMap<string, Resident>): void {
    for (const [name, resident] of values)
      this.#swap(name, new WeightEntry({ resident, shape: this.#entries.get(name)!.shape }));
  }

  #swap(name: string, entry: WeightEntry): void {
    void this.#entries.get(name)?.retire();
    this.#entries.set(name, entry);
    this.#snapshot = undefined;
  }

  /** The entries as a run sees them, shared by every lease until a weight changes (runs only read it). */
  #snapshot: ReadonlyMap<string, WeightEntry> | undefined;

  lease(): WeightLease {
    const held = (this.#snapshot ??= new Map(this.#entries));
    for (const e of held.values()) e.hold();
    let released = false;
    return {
      on: (name, executor) => held.get(name)!.on(executor),
      ready: (name, executor) => held.get(name)?.ready(executor),
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
    this.#snapshot = undefined;
    await Promise.all(entries.map((e) => e.retire()));
  }
}
