// `attngraph run <model.onnx> --inputs …` and `attngraph import <model.onnx>`: the public nanoGPT export, its attention
// weights by the short name, PyTorch's logits, and the refusals (no inputs, an unknown tap, flags that do nothing).
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { goldenModelsDir } from "@attngraph/testkit";
import { describe, expect, it } from "vitest";
import { main } from "../main.js";

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

const MODEL = join(goldenModelsDir, "nanogpt-onnx-l1.onnx");
const CASE = join(goldenModelsDir, "nanogpt-onnx-l1.json");

describe("attngraph run <model.onnx>", () => {
  it("--tap weights prints every attention's weights [B, H, T, T], causal rows", async () => {
    const r = await cli("run", MODEL, "--inputs", CASE, "--tap", "weights");
    expect(r.code).toBe(0);
    expect(r.out[0]).toBe(`${MODEL} on cpu`);
    expect(r.out[1]).toMatch(/^\n\/h\.0\/attn\/Softmax \[1, 2, 7, 7\]\ntensor\(\[\[\[\[1\.0000, 0\.0000,/);
  });

  it("prints the outputs by default (the logits), on wasm too, with --explain saying what fused", async () => {
    const r = await cli("run", MODEL, "--inputs", CASE, "--executor", "wasm", "--explain");
    expect(r.code).toBe(0);
    expect(r.out[0]).toMatch(/attention chains: 1/);
    expect(r.out[0]).toMatch(
      /pass fusion: fused \/h\.0\/attn\/MatMul \+ \/h\.0\/attn\/Where \+ \/h\.0\/attn\/Softmax \+ \/h\.0\/attn\/MatMul_1 → attention/,
    );
    expect(r.out[2]).toMatch(/^\nlogits \[1, 7, 30\]\ntensor\(\[\[\[ 4\.0507e-02, -2\.6915e-02/);
  });

  it("inputs as a plain object of tensors; ids that are not integers are refused", async () => {
    const dir = mkdtempSync(join(tmpdir(), "attngraph-onnx-"));
    writeFileSync(join(dir, "ok.json"), JSON.stringify({ idx: { shape: [2, 2], data: [1, 2, 3, 4] } }));
    const ok = await cli("run", MODEL, "--inputs", join(dir, "ok.json"), "--tap", "/h.0/attn/weights");
    expect(ok.out[1]).toMatch(/\/h\.0\/attn\/Softmax \[2, 2, 2, 2\]/);
    writeFileSync(join(dir, "bad.json"), JSON.stringify({ idx: { shape: [1, 2], data: [1, 2.5] } }));
    expect((await cli("run", MODEL, "--inputs", join(dir, "bad.json"))).err[0]).toMatch(
      /idx\.data\[1\]: the input is INT64, expected an integer, got 2\.5/,
    );
  });

  it("refuses: no --inputs, an unknown tap, --ops and --fused-qkv; --inputs with a JSON case", async () => {
    expect(await cli("run", MODEL)).toMatchObject({
      code: 2,
      err: [expect.stringMatching(/an ONNX model runs on the tensors of --inputs/)],
    });
    const tap = await cli("run", MODEL, "--inputs", CASE, "--tap", "nothing-here");
    expect(tap).toMatchObject({
      code: 1,
      err: [expect.stringMatching(/OnnxImportError: tap nothing-here: no node of the imported graph has this name/)],
    });
    expect((await cli("run", MODEL, "--inputs", CASE, "--fused-qkv")).code).toBe(2);
    expect((await cli("run", CASE, "--inputs", CASE)).err[0]).toMatch(
      /--inputs does nothing with a JSON case or repro/,
    );
  });
});

describe("attngraph import <model.onnx>", () => {
  it("says what it found: op types, folds, patterns, the attention chain; --explain lists every node", async () => {
    const r = await cli("import", MODEL, "--dims", "batch=1,T=5");
    expect(r.code).toBe(0);
    expect(r.out[0]).toMatch(/^ONNX model \(opset 17, from pytorch\): 114 nodes of 21 op types/);
    expect(r.out[0]).toMatch(/patterns recognised: linear ×4, score ×1, mask ×1, softmax ×1, weighted-sum ×1, gelu ×1/);
    expect(r.out[0]).toMatch(/attention chains: 1\n {2}\/h\.0\/attn\/: .* \(mask: causal top-left\)/);
    expect(r.out[0]).toMatch(/attngraph nodes: 29 \(--explain lists them\)$/);
    const full = await cli("import", MODEL, "--inputs", CASE, "--explain");
    expect(full.out[0]).toMatch(/logits = projection {2}← \/lm_head\/MatMul/);
    expect(full.out[0]).toMatch(/pass fusion: fused .* → attention/);
  });

  it("needs the sizes of symbolic dims, and refuses a file that is not ONNX", async () => {
    expect(await cli("import", MODEL)).toMatchObject({
      code: 1,
      err: [expect.stringMatching(/dims the file leaves open.*idx\[0\] \(batch\), idx\[1\] \(T\)/)],
    });
    expect((await cli("import", CASE)).code).toBe(2);
    expect((await cli("import", MODEL, "--inputs", CASE, "--dims", "T=3")).code).toBe(2);
  });
});
