// Shapes the model computes at run time. A graph's dims may be symbolic ("B", "T"), and ONNX ops such as Reshape and
// Range take their sizes as tensors, so a symbolic dim is read off a graph input that carries it (Shape with
// start/end, opset 15) when the model runs. Dims the export knows (numbers, names bound by a weight's shape) become
// constants, so a model with fixed shapes computes no shape at all.
import type { ValueDecl } from "@attngraph/graph";
import type { DimRef } from "./lowering.js";
import type { ModelWriter } from "./model-writer.js";

export class RuntimeShapes {
  readonly #writer: ModelWriter;
  /** Where each symbolic dim can be read: the first graph input (and axis) that carries it. */
  readonly #carriers = new Map<string, { of: string; axis: number }>();
  readonly #bound: ReadonlyMap<string, number>;
  readonly #slices = new Map<string, string>();
  readonly #scalars = new Map<string, string>();

  constructor(writer: ModelWriter, inputs: readonly ValueDecl[], bound: ReadonlyMap<string, number>) {
    this.#writer = writer;
    this.#bound = bound;
    for (const v of inputs)
      v.shape.forEach(
        (d, axis) => typeof d === "string" && !this.#carriers.has(d) && this.#carriers.set(d, { of: v.name, axis }),
      );
  }

  /** The dim as a number when known at export time. */
  known(dim: DimRef): number | undefined {
    if (typeof dim === "number") return dim;
    if (typeof dim === "string") return this.#bound.get(dim);
    return undefined;
  }

  /** Makes `dim` read where `to` is read (the two are equal in this model), unless a graph input carries `dim` itself. */
  alias(dim: string, to: string): void {
    const c = this.#carriers.get(to);
    if (c && !this.#carriers.has(dim)) this.#carriers.set(dim, c);
  }

  /** Where a symbolic dim is read at run time; undefined when no graph input carries it. */
  carrier(dim: string): { of: string; axis: number } | undefined {
    return this.#carriers.get(dim);
  }

  /** A 1-D int64 [1] tensor holding one dim. */
  #slice(of: string, axis: number): string {
    const key = `${of}\u0000${axis}`;
    let name = this.#slices.get(key);
    if (!name) {
      name = this.#writer.fresh(`${of}/shape${axis}`);
      this.#writer.emit("Shape", name, [of], [name], { start: axis, end: axis + 1 }, "");
      this.#slices.set(key, name);
    }
    return name;
  }

  /** A 1-D int64 tensor with these dims (a constant when all are known); `resolve` maps a name to its carrier. */
  shape(dims: readonly DimRef[], resolve: (name: string) => { of: string; axis: number }): string {
    const pieces: string[] = [];
    let run: number[] = [];
    const flush = () => {
      if (run.length) pieces.push(this.#writer.constant("int64", run));
      run = [];
    };
    for (const d of dims) {
      const n = this.known(d);
      if (n !== undefined) {
        run.push(n);
        continue;
      }
      flush();
      const ref = typeof d === "string" ? resolve(d) : (d as { of: string; axis: number });
      pieces.push(this.#slice(ref.of, ref.axis));
    }
    flush();
    if (pieces.length === 1) return pieces[0]!;
    if (pieces.length === 0) return this.#writer.constant("int64", [], [0]);
    const name = this.#writer.fresh("shape/concat");
    this.#writer.emit("Concat", name, pieces, [name], { axis: 0 }, "");
    return name;
  }

  /** One dim as an int64 scalar. */
  scalar(dim: DimRef, resolve: (name: string) => { of: string; axis: number }): string {
    const n = this.known(dim);
    if (n !== undefined) return this.#writer.constant("int64", [n], []);
    const ref = typeof dim === "string" ? resolve(dim) : (dim as { of: string; axis: number });
    const key = `${ref.of}\u0000${ref.axis}`;
    let name = this.#scalars.get(key);
    if (!name) {
      const slice = this.#slice(ref.of, ref.axis);
      name = this.#writer.fresh(`${slice}/scalar`);
      this.#writer.emit("Squeeze", name, [slice, this.#writer.constant("int64", [0])], [name], {}, "");
      this.#scalars.set(key, name);
    }
    return name;
  }
}
