import { Tensor, sizeOf, type Shape } from "@attngraph/tensor";
import type { Arena } from "@attngraph/graph";

/** One Float32Array that planned values are views into; the runtime pools arenas, one per run in flight. */
export class CpuArena implements Arena<Tensor> {
  readonly buffer: Float32Array;

  constructor(elements: number) {
    this.buffer = new Float32Array(elements);
  }

  view(offset: number, shape: Shape): Tensor {
    return new Tensor(this.buffer.subarray(offset, offset + sizeOf(shape)), shape);
  }

  holds(value: Tensor): boolean {
    return value.data.buffer === this.buffer.buffer;
  }

  copy(src: Tensor, dst: Tensor): Tensor {
    src.copyInto(dst.data, dst.offset);
    return dst;
  }
}
