// The README's example, run as written (the printed tensor is asserted).
import { expect, it } from "vitest";
import { Tensor } from "@attngraph/tensor";
import { createWasmExecutor } from "./index.js";

it("README example: fused attention by hand", async () => {
  const wasm = createWasmExecutor();
  await wasm.init(); // loads dist/wasm/attngraph-{relaxed,simd}.wasm; compile() does this for you
  expect(wasm.flavour).toBe("simd"); // Node 20 without --experimental-wasm-relaxed-simd

  // q [B=1, H=1, L=2, D=2], k = v [B=1, Hkv=1, S=3, D=2]
  const q = wasm.upload(
    Tensor.fromNested([
      [
        [
          [1, 0],
          [0, 1],
        ],
      ],
    ]),
  );
  const k = wasm.upload(
    Tensor.fromNested([
      [
        [
          [1, 0],
          [0, 1],
          [1, 1],
        ],
      ],
    ]),
  );
  const context = wasm.dispatch({
    kind: "attention",
    node: "context",
    inputs: [q, k, k, undefined],
    outShape: [1, 1, 2, 2],
    attrs: {
      causal: true,
      window: null,
      alignment: "top-left",
      scale: 1 / Math.sqrt(2),
      dropoutRate: 0,
      dropoutSeed: 0,
      training: false,
    },
  });
  expect(wasm.download(context).toString()).toBe("tensor([[[[1.0000, 0.0000],\n          [0.3302, 0.6698]]]])");
  for (const v of [q, k, context]) wasm.release(v);
  expect(wasm.inUseBytes).toBe(0);
});
