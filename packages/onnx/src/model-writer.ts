// The model under construction: ONNX nodes in order, initializers, and the names taken so far. Every name the graph
// uses is reserved up front, so a helper value a lowering adds ("scores/scaled") can never shadow a graph value.
import {
  doubleTensor,
  floatTensor,
  int32Tensor,
  int64Tensor,
  node,
  type AttrValue,
  type NodeMsg,
  type TensorMsg,
} from "./proto/proto.js";
import type { ConstType } from "./lowering.js";

export const CONTRIB_DOMAIN = "com.microsoft";

export class ModelWriter {
  readonly nodes: NodeMsg[] = [];
  readonly initializers: TensorMsg[] = [];
  /** Domains of the ONNX nodes written so far ("" = the default one). */
  readonly domains = new Set<string>();
  readonly #taken = new Set<string>();
  readonly #constants = new Map<string, string>();

  constructor(reserved: Iterable<string>) {
    for (const n of reserved) this.#taken.add(n);
  }

  /** A name no value has yet, `base` itself when free, else `base/2`, `base/3`, … */
  fresh(base: string): string {
    let name = base;
    for (let k = 2; this.#taken.has(name); k++) name = `${base}/${k}`;
    this.#taken.add(name);
    return name;
  }

  emit(
    op: string,
    name: string,
    inputs: readonly string[],
    outputs: readonly string[],
    attrs: Readonly<Record<string, AttrValue>>,
    domain: string,
  ): void {
    this.domains.add(domain);
    this.nodes.push(node(op, name, inputs, outputs, attrs, domain));
  }

  /** Renames the output of the last node written (a lowering's result takes its graph node's name). */
  renameLastOutput(from: string, to: string): boolean {
    const last = this.nodes[this.nodes.length - 1];
    if (last?.output.length !== 1 || last.output[0] !== from) return false;
    this.nodes[this.nodes.length - 1] = { ...last, output: [to] };
    return true;
  }

  addInitializer(t: TensorMsg): void {
    this.initializers.push(t);
  }

  /** A constant, written once however many nodes use it. */
  constant(type: ConstType, values: readonly number[], dims: readonly number[] = [values.length]): string {
    const key = `${type}:${dims.join("x")}:${values.join(",")}`;
    const known = this.#constants.get(key);
    if (known) return known;
    const name = this.fresh(`const/${type}/${values.length <= 4 ? values.join("_") : `${values.length}values`}`);
    this.addInitializer(constantTensor(name, type, values, dims));
    this.#constants.set(key, name);
    return name;
  }
}

function constantTensor(name: string, type: ConstType, values: readonly number[], dims: readonly number[]): TensorMsg {
  switch (type) {
    case "float":
      return floatTensor(name, dims, Float32Array.from(values));
    case "double":
      return doubleTensor(name, dims, Float64Array.from(values));
    case "int32":
      return int32Tensor(name, dims, Int32Array.from(values));
    case "int64":
      return int64Tensor(name, values, dims);
  }
}
