// Which flavour "auto" picks follows from what this engine validates, not from its version: Node 20 rejects relaxed
// SIMD unless started with --experimental-wasm-relaxed-simd, Node 22+ and current browsers accept it. So the
// expectation is WebAssembly.validate of a minimal hand-written module with one relaxed-SIMD instruction
// (f32x4.relaxed_madd), checked beside a control module that differs only in that instruction (v128.bitselect, plain
// SIMD): a slip in these bytes fails the control instead of passing for "this engine lacks relaxed SIMD". The relaxed
// flavour's own suite runs in flavour.relaxed.test.ts, under a config that turns the flag on.
import { describe, expect, it } from "vitest";
import { AttnGraphError } from "@attngraph/tensor";
import { wasmBytes } from "./module.js";
import { onCpu, onWasm, random, wasmExecutor, worst } from "./test-util.js";
import type { WasmExecutor } from "./executor.js";

/** (func (param v128 v128 v128) (result v128) local.get 0 local.get 1 local.get 2 <0xfd-prefixed op>) */
function simdModule(op: readonly number[]): Uint8Array<ArrayBuffer> {
  const body = [0x00, 0x20, 0x00, 0x20, 0x01, 0x20, 0x02, 0xfd, ...op, 0x0b];
  return Uint8Array.from([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00], // \0asm, version 1
    ...[0x01, 0x08, 0x01, 0x60, 0x03, 0x7b, 0x7b, 0x7b, 0x01, 0x7b], // type section: (v128, v128, v128) → v128
    ...[0x03, 0x02, 0x01, 0x00], // function section: one function of type 0
    ...[0x0a, body.length + 2, 0x01, body.length, ...body], // code section
  ]);
}
const RELAXED_MADD = [0x85, 0x02]; // f32x4.relaxed_madd, 0xfd 261 (LEB128)
const BITSELECT = [0x52]; // v128.bitselect, 0xfd 82

const engineHasRelaxed = WebAssembly.validate(simdModule(RELAXED_MADD));
const expected = engineHasRelaxed ? "relaxed" : "simd";

/** Projection (across the 5×8 tiles) and fused causal attention on `ex`, each against the CPU executor. */
function computes(ex: WasmExecutor): void {
  const x = random([2, 67, 300], 1);
  const w = random([40, 300], 2);
  const b = random([40], 3);
  const proj = onWasm(ex, "projection", {}, [x, w, b], [2, 67, 40]);
  expect(worst(proj, onCpu("projection", {}, [x, w, b], [2, 67, 40])), "projection vs cpu").toBeLessThan(1);
  expect(
    proj.toFloat32Array().some((v) => Math.abs(v) > 0.1),
    "projection is not all zeros",
  ).toBe(true);
  const q = random([1, 2, 130, 16], 4);
  const k = random([1, 2, 130, 16], 5);
  const v = random([1, 2, 130, 16], 6);
  // The other attributes take their declared defaults (checkCall fills them in): no window, top-left, no dropout.
  const attrs = { causal: true, scale: 0.25 };
  const att = onWasm(ex, "attention", attrs, [q, k, v, undefined], [1, 2, 130, 16]);
  expect(worst(att, onCpu("attention", attrs, [q, k, v, undefined], [1, 2, 130, 16])), "attention vs cpu").toBeLessThan(
    1,
  );
  // Causal: query 0 sees only key 0, so its context row is v's row 0 exactly (up to rounding).
  expect(Math.abs(att.get(0, 0, 0, 0) - v.get(0, 0, 0, 0))).toBeLessThan(1e-6);
}

describe(`flavour selection (this engine ${engineHasRelaxed ? "validates" : "rejects"} relaxed SIMD)`, () => {
  it("the probe is well-formed: the same module with a plain SIMD instruction validates", () => {
    expect(WebAssembly.validate(simdModule(BITSELECT))).toBe(true);
  });

  it("the package's plain SIMD module validates, and its relaxed one exactly when the probe does", async () => {
    expect(WebAssembly.validate(await wasmBytes("simd"))).toBe(true);
    // False on an engine with relaxed SIMD: the relaxed build is broken. True on one without: the "relaxed" build uses
    // no relaxed instruction (the build flag fell off), so auto would pick it for nothing.
    expect(WebAssembly.validate(await wasmBytes("relaxed"))).toBe(engineHasRelaxed);
  });

  it(`"auto" picks ${expected}, and it computes: projection and fused attention match the CPU executor`, async () => {
    const ex = await wasmExecutor();
    expect(ex.flavour).toBe(expected);
    computes(ex);
  });

  it('"simd" is plain SIMD on any engine, and it computes', async () => {
    const ex = await wasmExecutor({ flavour: "simd" });
    expect(ex.flavour).toBe("simd");
    computes(ex);
  });

  it.runIf(!engineHasRelaxed)('asking for "relaxed" is a loud UnsupportedError at init', async () => {
    const e = await wasmExecutor({ flavour: "relaxed" }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(AttnGraphError.isInstance(e)).toBe(true);
    expect((e as AttnGraphError).code).toBe("unsupported");
    expect((e as Error).message).toMatch(/^unsupported: wasm flavour relaxed/);
  });

  it.runIf(engineHasRelaxed)('asking for "relaxed" gives the relaxed flavour, and it computes', async () => {
    const ex = await wasmExecutor({ flavour: "relaxed" });
    expect(ex.flavour).toBe("relaxed");
    computes(ex);
  });

  it("dispatching before init() is an error that says so", () => {
    return import("./register-kernels.js").then(({ createWasmExecutor }) => {
      const ex = createWasmExecutor();
      expect(ex.supports("softmax", {}).ok).toBe(true); // answered without the module
      expect(() => ex.dispatch({ kind: "softmax", node: "s", attrs: { scale: 1 }, inputs: [], outShape: [1] })).toThrow(
        /not initialised: await init\(\) first/,
      );
    });
  });
});
