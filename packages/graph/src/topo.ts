// The node order of an OpGraph. Among all topological orders it picks the one that keeps declaration order wherever
// dependencies allow (always the ready node declared first), so a list that is already in order comes back unchanged:
// that is what makes toJSON(fromJSON(x)) list the nodes exactly as x does. Everything here is iterative, because a
// graph read from JSON may be a chain long enough to overflow the call stack, and keyed by index, never by name in a
// plain object, because node names such as "__proto__" or "constructor" are legal.

/**
 * `deps[i]` lists the nodes that node i reads (indices into the declaration order; repeats allowed). Returns the
 * order, or undefined when the nodes form a cycle.
 */
export function stableTopologicalOrder(deps: readonly (readonly number[])[]): number[] | undefined {
  const n = deps.length;
  const waiting = deps.map((d) => d.length);
  const consumers = consumerLists(deps);
  const ready = new MinHeap();
  for (let i = 0; i < n; i++) if (waiting[i] === 0) ready.push(i);
  const order: number[] = [];
  while (ready.size > 0) {
    const i = ready.pop();
    order.push(i);
    for (const c of consumers[i]!) if (--waiting[c]! === 0) ready.push(c);
  }
  return order.length === n ? order : undefined;
}

/** One cycle in data-flow order, its first node repeated at the end (a → b → a); empty when there is none. */
export function findCycle(deps: readonly (readonly number[])[]): number[] {
  const consumers = consumerLists(deps);
  const state = new Uint8Array(deps.length); // 0 unseen, 1 on the current path, 2 done
  for (let root = 0; root < deps.length; root++) {
    if (state[root] !== 0) continue;
    const path: number[] = [root];
    const next: number[] = [0]; // per path entry: which consumer to look at next
    state[root] = 1;
    while (path.length > 0) {
      const top = path.length - 1;
      const node = path[top]!;
      const list = consumers[node]!;
      if (next[top]! < list.length) {
        const c = list[next[top]!++]!;
        if (state[c] === 1) return [...path.slice(path.indexOf(c)), c];
        if (state[c] === 0) {
          state[c] = 1;
          path.push(c);
          next.push(0);
        }
      } else {
        state[node] = 2;
        path.pop();
        next.pop();
      }
    }
  }
  return [];
}

function consumerLists(deps: readonly (readonly number[])[]): number[][] {
  const consumers: number[][] = deps.map(() => []);
  deps.forEach((d, i) => {
    for (const j of d) consumers[j]!.push(i);
  });
  return consumers;
}

/** A binary min-heap of indices. */
class MinHeap {
  readonly #a: number[] = [];

  get size(): number {
    return this.#a.length;
  }

  push(v: number): void {
    const a = this.#a;
    let i = a.push(v) - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (a[p]! <= v) break;
      a[i] = a[p]!;
      i = p;
    }
    a[i] = v;
  }

  pop(): number {
    const a = this.#a;
    const top = a[0]!;
    const last = a.pop()!;
    if (a.length > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= a.length) break;
        const c = l + 1 < a.length && a[l + 1]! < a[l]! ? l + 1 : l;
        if (a[c]! >= last) break;
        a[i] = a[c]!;
        i = c;
      }
      a[i] = last;
    }
    return top;
  }
}
