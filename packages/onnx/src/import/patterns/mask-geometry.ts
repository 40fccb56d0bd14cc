// A static mask, folded at import, read back as attngraph's mask attributes where it is one: causal with top-left or
// bottom-right alignment and an optional sliding window. Anything else stays a 0/1 tensor.
import { broadcastIndex } from "../broadcast-host.js";
import { sizeOf, type HostTensor } from "../host-tensor.js";

/** `hidden` broadcast to [L, S] (or [B|1, H|1, L, S] when it varies over batch or head) as keep: 1 = visible. */
export function keepPlane(
  hidden: HostTensor,
  hideWhenTrue: boolean,
  b: number,
  h: number,
  l: number,
  s: number,
): HostTensor | undefined {
  return toScores(hidden, b, h, l, s, (v) => ((v !== 0) === hideWhenTrue ? 0 : 1));
}

/** A static bias as the mask's bias: [L, S], or [B|1, H|1, L, S] (ONNX aligns a rank-3 bias to [H, L, S]). */
export function expandTo4(t: HostTensor, b: number, h: number, l: number, s: number): HostTensor | undefined {
  return toScores(t, b, h, l, s, (v) => v);
}

/**
 * `t` broadcast (ONNX's rules: aligned from the last axis) to the scores' [L, S], or [B|1, H|1, L, S] when it varies over
 * batch or head, each element mapped by `f`; undefined when it does not broadcast to [B, H, L, S].
 */
function toScores(
  t: HostTensor,
  b: number,
  h: number,
  l: number,
  s: number,
  f: (v: number) => number,
): HostTensor | undefined {
  if (t.shape.length > 4) return undefined;
  const four = [...Array(4 - t.shape.length).fill(1), ...t.shape] as number[];
  if (
    (four[0] !== 1 && four[0] !== b) ||
    (four[1] !== 1 && four[1] !== h) ||
    (four[2] !== 1 && four[2] !== l) ||
    (four[3] !== 1 && four[3] !== s)
  )
    return undefined;
  const plane = four[0] === 1 && four[1] === 1;
  const target = plane ? [l, s] : [four[0]!, four[1]!, l, s];
  const idx = broadcastIndex(plane ? four.slice(2) : four, target);
  const data = new Float32Array(sizeOf(target));
  for (let i = 0; i < data.length; i++) data[i] = f(t.data[idx[i]!]!);
  return { dtype: "float32", shape: target, data };
}

export interface Geometry {
  readonly causal: true;
  readonly window: number | null;
  readonly alignment: "top-left" | "bottom-right";
}

/** The causal geometry a keep plane [L, S] is exactly, if any. */
export function geometryOf(keep: HostTensor): Geometry | undefined {
  if (keep.shape.length !== 2) return undefined;
  const [l, s] = keep.shape as [number, number];
  if (l === 0 || s === 0) return undefined;
  for (const alignment of ["top-left", "bottom-right"] as const) {
    const off = alignment === "top-left" ? 0 : s - l;
    // The window: how many keys the last query sees, if that is fewer than its position allows.
    const lastPos = l - 1 + off;
    let seen = 0;
    for (let j = 0; j < s; j++) seen += keep.data[(l - 1) * s + j]!;
    for (const window of [null, seen] as const) {
      if (window === 0) continue;
      let ok = true;
      for (let i = 0; i < l && ok; i++) {
        const pos = i + off;
        for (let j = 0; j < s && ok; j++) {
          const visible = j <= pos && (window === null || j > pos - window);
          if ((keep.data[i * s + j] === 1) !== visible) ok = false;
        }
      }
      if (ok) return { causal: true, window: window !== null && window <= lastPos ? window : null, alignment };
    }
  }
  return undefined;
}
