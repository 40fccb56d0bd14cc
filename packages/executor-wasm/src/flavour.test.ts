// Without --experimental-wasm-relaxed-simd (how Node 20 runs by default) the relaxed module does not validate, and
// "auto" falls back to plain SIMD. The relaxed flavour itself runs in flavour.relaxed.test.ts, with the flag.
import { describe, expect, it } from "vitest";
import { AttnGraphError } from "@attngraph/tensor";
import { wasmBytes } from "./module.js";
import { wasmExecutor } from "./test-util.js";

describe("flavour selection without relaxed SIMD", () => {
  it("this engine rejects the relaxed module and accepts the plain SIMD one", async () => {
    expect(WebAssembly.validate(await wasmBytes("relaxed"))).toBe(false);
    expect(WebAssembly.validate(await wasmBytes("simd"))).toBe(true);
  });

  it('"auto" falls back to plain SIMD, and it computes', async () => {
    const ex = await wasmExecutor();
    expect(ex.flavour).toBe("simd");
  });

  it('asking for "relaxed" is a loud UnsupportedError at init', async () => {
    const e = await wasmExecutor({ flavour: "relaxed" }).then(() => undefined, (err: unknown) => err);
    expect(AttnGraphError.isInstance(e)).toBe(true);
    expect((e as AttnGraphError).code).toBe("unsupported");
    expect((e as Error).message).toMatch(/^unsupported: wasm flavour relaxed/);
  });

  it("dispatching before init() is an error that says so", () => {
    return import("./register-kernels.js").then(({ createWasmExecutor }) => {
      const ex = createWasmExecutor();
      expect(ex.supports("softmax", {}).ok).toBe(true); // answered without the module
      expect(() => ex.dispatch({ kind: "softmax", node: "s", attrs: { scale: 1 }, inputs: [], outShape: [1] })).toThrow(/not initialised: await init\(\) first/);
    });
  });
});
