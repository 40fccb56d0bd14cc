import { yieldToEventLoop } from "@attngraph/graph";
import { config as rxConfig } from "rxjs";
import { TapError } from "./errors.js";
import type { TapEvent } from "./events.js";

/** Which nodes a tap watches: a name, a list of names, or a predicate over node names. */
export type TapSelector = string | readonly string[] | ((node: string) => boolean);

/**
 * How tapped tensors reach subscribers. In both modes a run's steps never call a subscriber: a watched step only copies
 * its tensor onto each subscriber's queue, so a slow or throwing subscriber never delays or fails a step.
 * - `"settle"` (default): a run delivers the queued events after its last step (also after a failure or an abort),
 *   before its promise settles, so `await session.run()` still means "its taps have arrived".
 * - `"detached"`: queues drain in tasks of their own, one event per task, and the run settles without waiting; a
 *   subscriber that falls behind loses its oldest events (see `buffer`).
 */
export interface TapPolicy {
  readonly delivery: "settle" | "detached";
  /** Most events one subscriber may have pending; past it the oldest is dropped and a `tap-dropped` event emitted. */
  readonly buffer: number;
}

export const DEFAULT_TAP_POLICY: TapPolicy = Object.freeze({ delivery: "settle", buffer: 1024 });

/**
 * A run's own tap (`run(inputs, { tap })`): watches `nodes` in that run only. No other run's values reach it, and it
 * reaches no other run, however many runs are in flight (a session tap made for one call would see every run that
 * starts while it is subscribed). Its events are handed to `next` before the run settles, whatever the session's tap
 * policy, and none is dropped.
 */
export interface RunTap {
  readonly nodes: TapSelector;
  readonly next: (event: TapEvent) => void;
}

/** Where a watcher's events go: an rxjs Subscriber, or a run tap's callback. */
export interface TapSink {
  readonly closed: boolean;
  next(event: TapEvent): void;
  complete(): void;
}

/** A run tap's delivery: always before its run settles, never dropping. */
const RUN_TAP_POLICY: TapPolicy = Object.freeze({ delivery: "settle", buffer: Number.POSITIVE_INFINITY });

/** One subscription: what it watches, and its queue of events not yet delivered. */
export class Watcher {
  /** How messages name this tap: `tap weights`, `tap #3 (predicate)`. */
  readonly label: string;
  readonly matches: (node: string) => boolean;
  readonly subscriber: TapSink;
  /** The session's policy, or a run tap's own (RUN_TAP_POLICY). */
  readonly policy: TapPolicy | undefined;
  /** Events this subscriber has lost to the bound, so far. */
  dropped = 0;
  readonly #queue: TapEvent[] = [];
  #draining = false;
  #scheduled = false;

  constructor(label: string, matches: (node: string) => boolean, subscriber: TapSink, policy?: TapPolicy) {
    this.label = label;
    this.matches = matches;
    this.subscriber = subscriber;
    this.policy = policy;
  }

  /** Whether a run hands this watcher's events over before it settles (the "settle" delivery). */
  settlesWith(sessionPolicy: TapPolicy): boolean {
    return (this.policy ?? sessionPolicy).delivery === "settle";
  }

  get pending(): number {
    return this.#queue.length;
  }

  /** Queues one event; returns the event dropped to make room, if any. */
  push(e: TapEvent, sessionPolicy: TapPolicy): TapEvent | undefined {
    if (this.subscriber.closed) return undefined;
    const policy = this.policy ?? sessionPolicy;
    this.#queue.push(e);
    const lost = this.#queue.length > policy.buffer ? this.#queue.shift() : undefined;
    if (lost) this.dropped++;
    if (policy.delivery === "detached") this.#schedule();
    return lost;
  }

  /** Delivers everything pending, in order. A subscriber that runs a flush from inside `next` is not re-entered. */
  flush(): void {
    if (this.#draining) return;
    this.#draining = true;
    try {
      while (this.#queue.length > 0) this.#deliverOne();
    } finally {
      this.#draining = false;
    }
  }

  #deliverOne(): void {
    const e = this.#queue.shift()!;
    if (this.subscriber.closed) {
      this.#queue.length = 0;
      return;
    }
    try {
      this.subscriber.next(e);
    } catch (err) {
      // rxjs already catches a throwing `next` callback and reports it; this is for a subscriber that rethrows
      // synchronously anyway (rxjs' deprecated synchronous error handling). Report it the way rxjs does.
      const report = rxConfig.onUnhandledError;
      if (report) report(err);
      else
        setTimeout(() => {
          throw err;
        });
    }
  }

  /** Detached delivery: one event per task, so runs and other subscribers get the thread between two deliveries. */
  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    void yieldToEventLoop().then(() => {
      this.#scheduled = false;
      if (this.#draining || this.#queue.length === 0) return;
      this.#deliverOne();
      if (this.#queue.length > 0) this.#schedule();
    });
  }
}

/**
 * The live tap subscriptions of a session. A run takes a snapshot before it starts (subscription drives work: only
 * nodes in the snapshot are read back and copied); a subscription made mid-run starts with the next run.
 */
/** The snapshot of a run nobody watches (most runs): one shared, never changed, instead of a new one per run. */
const NOBODY_WATCHES: { watched: Map<string, Watcher[]>; failed: TapError[] } = Object.freeze({
  watched: new Map<string, Watcher[]>(),
  failed: [] as TapError[],
});

export class TapRegistry {
  readonly #watchers = new Set<Watcher>();

  add(label: string, matches: (node: string) => boolean, subscriber: TapSink): () => void {
    const w = new Watcher(label, matches, subscriber);
    this.#watchers.add(w);
    return () => this.#watchers.delete(w);
  }

  /** Delivers what is pending, then completes every tap (the session is going away). */
  completeAll(): void {
    for (const w of this.#watchers) {
      w.flush();
      w.subscriber.complete();
    }
    this.#watchers.clear();
  }

  get size(): number {
    return this.#watchers.size;
  }

  /**
   * The watchers of each watched node, for the given node names; empty when nobody watches. A watcher whose predicate
   * throws is dropped and its Observable completes; the TapErrors are returned for the run to reject with. (Erroring
   * the Observable instead would crash Node for a subscriber without an error callback: rxjs rethrows those.)
   */
  snapshot(nodes: readonly string[]): { watched: Map<string, Watcher[]>; failed: TapError[] } {
    if (this.#watchers.size === 0) return NOBODY_WATCHES;
    const watched = new Map<string, Watcher[]>();
    const failed: TapError[] = [];
    const broken = new Set<Watcher>();
    for (const node of nodes) {
      const subs: Watcher[] = [];
      for (const w of this.#watchers) {
        if (broken.has(w)) continue;
        try {
          if (w.matches(node)) subs.push(w);
        } catch (e) {
          broken.add(w);
          failed.push(new TapError(w.label, node, e));
        }
      }
      if (subs.length) watched.set(node, subs);
    }
    for (const w of broken) this.#watchers.delete(w);
    for (const list of watched.values())
      for (let i = list.length - 1; i >= 0; i--) if (broken.has(list[i]!)) list.splice(i, 1);
    for (const [node, list] of watched) if (list.length === 0) watched.delete(node);
    for (const w of broken) w.subscriber.complete();
    return { watched, failed };
  }
}

/**
 * `watched` (a run's snapshot of the session's taps) with a run tap added: a new map, so the snapshot (which may be the
 * shared empty one) is never changed. `matches` was checked against the graph's names by the caller.
 */
export function withRunTap(
  watched: ReadonlyMap<string, Watcher[]>,
  nodes: readonly string[],
  label: string,
  matches: (node: string) => boolean,
  next: (event: TapEvent) => void,
): Map<string, Watcher[]> {
  let closed = false;
  const sink: TapSink = {
    get closed() {
      return closed;
    },
    next,
    complete: () => void (closed = true),
  };
  const w = new Watcher(label, matches, sink, RUN_TAP_POLICY);
  const out = new Map<string, Watcher[]>();
  for (const [node, list] of watched) out.set(node, [...list]);
  for (const node of nodes) {
    if (!matches(node)) continue;
    const list = out.get(node);
    if (list) list.push(w);
    else out.set(node, [w]);
  }
  return out;
}
