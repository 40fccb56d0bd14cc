// Every implementation the harness knows, in table order: the attngraph executors first, then the peers.
import { attngraphExecutors, attngraphImpl } from "./attngraph.js";
import { ortImpl, ortNodeImpl, ortWebImpl } from "./ort.js";
import { tfjsImpl } from "./tfjs.js";
import type { Impl } from "./types.js";

export function allImpls(): Impl[] {
  return [...Object.keys(attngraphExecutors).map(attngraphImpl), tfjsImpl("cpu"), tfjsImpl("wasm"), tfjsImpl("cpu", "stock"), tfjsImpl("wasm", "stock"), ortWebImpl, ortNodeImpl, ortImpl("web", "mha"), ortImpl("node", "mha")];
}
