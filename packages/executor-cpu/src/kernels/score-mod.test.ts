// score-mod, mask-mod and score-mod-input-grad on cpu: against each expression written out by hand (float64, rounded
// to float32 as stored), on strided input; learnable gathered gradients against finite differences; bad calls (a bad
// expression, a missing gathered tensor, a read out of range) are typed errors naming the node, never NaN.
import { AttnGraphError, Tensor } from "@attngraph/tensor";
import { randomTensor as rand } from "@attngraph/testkit";
import { describe, expect, it } from "vitest";
import { maskModKernel, scoreModKernel } from "./score-mod.js";
import { scoreModInputGradKernel } from "./score-mod-input-grad.js";
import { alibiScoreMod } from "@attngraph/graph";
const [B, H, L, S] = [2, 3, 4, 5];
const scores = rand([B, H, L, S], 1);
const slopes = Tensor.from([0.5, 0.25, 0.125], [3]);
const table = rand([H, L + S - 1], 2);
const alibi = alibiScoreMod();
const rel = {
  op: "add",
  args: [
    { op: "tanh", args: ["score"] },
    { op: "input", name: "table", index: ["h", { op: "add", args: [{ op: "sub", args: ["q", "kv"] }, S - 1] }] },
  ],
};
const call = (kind: string, inputs: Tensor[], attrs: Record<string, unknown>) => ({
  kind,
  node: "n",
  attrs,
  inputs,
  outShape: inputs[0]!.shape,
});
const at = (t: Tensor, b: number, h: number, q: number, kv: number) => t.toArray()[((b * H + h) * L + q) * S + kv]!;

describe("score-mod / mask-mod kernels", () => {
  it("score-mod: ALiBi and a tanh with a relative bias table, element by element, each step in float32", () => {
    const a = scoreModKernel(
      call("score-mod", [scores, slopes], { scale: 0.5, expr: alibi, inputs: ["slopes"] }),
    ) as Tensor;
    const r = scoreModKernel(call("score-mod", [scores, table], { scale: 1, expr: rel, inputs: ["table"] })) as Tensor;
    for (let b = 0; b < B; b++)
      for (let h = 0; h < H; h++)
        for (let q = 0; q < L; q++)
          for (let kv = 0; kv < S; kv++) {
            // Every step rounded to float32, as the kernels of every executor compute.
            const f = Math.fround;
            const s = at(scores, b, h, q, kv);
            expect(at(a, b, h, q, kv)).toBe(f(f(0.5 * s) + f([0.5, 0.25, 0.125][h]! * (kv - q))));
            expect(at(r, b, h, q, kv)).toBe(f(f(Math.tanh(s)) + table.toArray()[h * (L + S - 1) + q - kv + S - 1]!));
          }
  });

  it("mask-mod: −∞ where the expression is false, the score itself elsewhere, on a transposed (strided) input", () => {
    const t = rand([B, H, S, L], 3).transpose(2, 3); // [B, H, L, S], not contiguous
    const out = maskModKernel(call("mask-mod", [t], { expr: { op: "ge", args: ["q", "kv"] } })) as Tensor;
    const dense = t.contiguous();
    for (let b = 0; b < B; b++)
      for (let h = 0; h < H; h++)
        for (let q = 0; q < L; q++)
          for (let kv = 0; kv < S; kv++)
            expect(at(out, b, h, q, kv)).toBe(q >= kv ? at(dense, b, h, q, kv) : -Infinity);
  });

  it("score-mod-input-grad: the gathered table's gradient equals finite differences of Σ grad ⊙ out", () => {
    const grad = rand([B, H, L, S], 4);
    const attrs = { scale: 1, expr: rel, inputs: ["table"], wrt: "table" };
    const got = (
      scoreModInputGradKernel({
        ...call("score-mod-input-grad", [scores, grad, table], attrs),
        outShape: table.shape,
      }) as Tensor
    ).toArray();
    const loss = (t: Tensor) => {
      const out = (
        scoreModKernel(call("score-mod", [scores, t], { scale: 1, expr: rel, inputs: ["table"] })) as Tensor
      ).toArray();
      return out.reduce((acc, v, i) => acc + v * grad.toArray()[i]!, 0);
    };
    const base = table.toArray();
    for (let i = 0; i < base.length; i++) {
      const bump = (d: number) =>
        Tensor.from(
          base.map((v, k) => (k === i ? v + d : v)),
          table.shape,
        );
      const fd = (loss(bump(1e-2)) - loss(bump(-1e-2))) / 2e-2; // linear in the table: exact up to float32 rounding
      expect(got[i], `table[${i}]`).toBeCloseTo(fd, 3);
    }
  });

  it("bad calls are typed errors naming the node: a bad expression, a missing gathered tensor, a read out of range", () => {
    const typed = (f: () => unknown, message: RegExp) => {
      const e = (() => {
        try {
          f();
        } catch (err) {
          return err;
        }
      })();
      expect(AttnGraphError.isInstance(e), String(e)).toBe(true);
      expect((e as Error).message).toMatch(message);
    };
    typed(
      () => scoreModKernel(call("score-mod", [scores], { scale: 1, expr: { op: "pow", args: [1, 2] } })),
      /n\.expr\.op: unknown operation/,
    );
    typed(
      () => scoreModKernel(call("score-mod", [scores], { scale: 1, expr: alibi, inputs: ["slopes"] })),
      /n\.inputs: invalid attribute of op score-mod, expected a tensor in slot g0 for slopes/,
    );
    const short = Tensor.from([0.5, 0.25], [2]); // 2 slopes for 3 heads: head 2 reads past the end
    typed(
      () => scoreModKernel(call("score-mod", [scores, short], { scale: 1, expr: alibi, inputs: ["slopes"] })),
      /n\.expr\.args\[1\]\.args\[0\]: gathered index 2 on axis 0 is out of range at b=0, h=2, q=0, kv=0/,
    );
    typed(
      () => maskModKernel(call("mask-mod", [scores], { expr: { op: "gt", args: ["score", 0] } })),
      /n\.expr\.args\[0\]: a mask modification cannot read the score/,
    );
  });
});
