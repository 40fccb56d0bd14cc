import type { SumToAttrs } from "@attngraph/graph";
import type { OpLowering } from "../lowering.js";

/**
 * sum-to: the reverse of broadcasting. Axes x has beyond the target's rank and axes where the target has 1 are summed
 * (ReduceSum with keepdims), then the leading ones are squeezed away. Which axes is known at export time: ranks and
 * 1s are never symbolic.
 */
export const sumTo: OpLowering = (l) => {
  const { shape } = l.node.attrs as unknown as SumToAttrs;
  const x = l.shapeOf("x");
  const lead = x.length - shape.length;
  const axes = [
    ...Array.from({ length: lead }, (_, i) => i),
    ...shape.flatMap((d, i) => (d === 1 && x[lead + i] !== 1 ? [lead + i] : [])),
  ];
  if (axes.length === 0) return l.required("x");
  const summed = l.emit("ReduceSum", [l.required("x"), l.constant("int64", axes)], { keepdims: 1 });
  return lead === 0
    ? summed
    : l.emit("Squeeze", [
        summed,
        l.constant(
          "int64",
          Array.from({ length: lead }, (_, i) => i),
        ),
      ]);
};
