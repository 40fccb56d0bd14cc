import type { Subscriber } from "rxjs";
import type { TapEvent } from "./events.js";

/** Which nodes a tap watches: a name, a list of names, or a predicate over node names. */
export type TapSelector = string | readonly string[] | ((node: string) => boolean);

interface Watcher {
  readonly matches: (node: string) => boolean;
  readonly subscriber: Subscriber<TapEvent>;
}

/**
 * The live tap subscriptions of a session. A run takes a snapshot before it starts (subscription drives work: only
 * nodes in the snapshot are read back and copied); a subscription made mid-run starts with the next run.
 */
export class TapRegistry {
  readonly #watchers = new Set<Watcher>();

  add(matches: (node: string) => boolean, subscriber: Subscriber<TapEvent>): () => void {
    const w = { matches, subscriber };
    this.#watchers.add(w);
    return () => this.#watchers.delete(w);
  }

  /** Completes every tap (the session is going away). */
  completeAll(): void {
    for (const w of this.#watchers) w.subscriber.complete();
    this.#watchers.clear();
  }

  get size(): number {
    return this.#watchers.size;
  }

  /** The watchers of each watched node, for the given node names; empty when nobody watches. */
  snapshot(nodes: readonly string[]): Map<string, Subscriber<TapEvent>[]> {
    const out = new Map<string, Subscriber<TapEvent>[]>();
    if (this.#watchers.size === 0) return out;
    for (const node of nodes) {
      const subs = [...this.#watchers].filter((w) => w.matches(node)).map((w) => w.subscriber);
      if (subs.length) out.set(node, subs);
    }
    return out;
  }
}
