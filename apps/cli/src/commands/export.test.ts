// `attngraph export` through main(), as a user runs it: a golden case's model, loaded back in onnxruntime-node, gives
// the case's expected output in both contrib modes; a graph document exports with a weights file or seeded random
// weights, a decode graph's with past/present caches; a user op and a missing -o are one-line errors.
import { attentionWeights, buildAttention } from "@attngraph/attention";
import { createOpRegistry, defineOp, GraphBuilder, toJSON } from "@attngraph/graph";
import { writeSafetensors } from "@attngraph/nn";
import { compare, Tensor } from "@attngraph/tensor";
import { goldenDir, goldenFlexDir, goldenTrainDir, loadCase, parseFlexCase } from "@attngraph/testkit";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import { describe, expect, it } from "vitest";
import { main } from "../main.js";

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

const tmp = () => mkdtempSync(join(tmpdir(), "attngraph-export-"));

/** Runs the model file in onnxruntime-node on float32 inputs; returns the first output. */
async function runModel(path: string, inputs: Record<string, Tensor>): Promise<Tensor> {
  const session = await ort.InferenceSession.create(readFileSync(path));
  const feeds = Object.fromEntries(
    session.inputNames.map((n) => [n, new ort.Tensor("float32", inputs[n]!.toFloat32Array(), [...inputs[n]!.shape])]),
  );
  const out = (await session.run(feeds))[session.outputNames[0]!]!;
  await session.release();
  return Tensor.from(out.data as Float32Array, out.dims.map(Number));
}

describe("attngraph export", () => {
  it.each(["auto", "none"])(
    "a golden case's model gives the case's output in onnxruntime (--contrib %s)",
    async (contrib) => {
      const file = join(goldenDir, "key-padding-b3-t6-d8-h2.json");
      const path = join(tmp(), "model.onnx");
      const { code, out } = await cli("export", file, "-o", path, "--contrib", contrib);
      expect(code).toBe(0);
      expect(out[0]).toMatch(
        new RegExp(
          `^wrote ${path}: \\d+ nodes \\(0 as com.microsoft ops\\), \\d+ bytes, opsets ai.onnx 17; the case's weights`,
        ),
      );
      const c = loadCase(file);
      const got = await runModel(path, c.inputs);
      const r = compare(got, c.expected["output"]!, c.tolerance);
      expect(r.ok, JSON.stringify(r.worst)).toBe(true);
    },
  );

  it("a golden-flex case (a gathered relative bias table) exports its score-mod as plain ops and gives the case's output", async () => {
    const file = join(goldenFlexDir, "flex-relbias-learnable-b1-h2-t8-d8.json");
    const path = join(tmp(), "flex.onnx");
    const { code, out } = await cli("export", file, "-o", path, "--explain");
    expect(code).toBe(0);
    expect(out.find((l) => l.startsWith("scores.mod (score-mod) → "))).toContain("Gather");
    const c = parseFlexCase(JSON.parse(readFileSync(file, "utf8")), file);
    const got = await runModel(path, c.inputs as Record<string, Tensor>);
    const r = compare(got, c.expected["output"]! as Tensor, c.tolerance);
    expect(r.ok, JSON.stringify(r.worst)).toBe(true);
  });

  it("--explain names the ONNX ops of each node: the block's GELU as com.microsoft.Gelu", async () => {
    const path = join(tmp(), "block.onnx");
    const { code, out } = await cli(
      "export",
      join(goldenTrainDir, "block-causal-b2-t10-e16-h4.json"),
      "-o",
      path,
      "--explain",
    );
    expect(code).toBe(0);
    expect(out[0]).toMatch(/\(1 as com.microsoft ops\).*opsets ai.onnx 17, com.microsoft 1/);
    expect(out).toContain("mlp.gelu (gelu) → com.microsoft.Gelu");
    expect(out).toContain("ln1 (layer-norm) → LayerNormalization");
  });

  it("a graph document takes its weights from --weights, or seeded random ones", async () => {
    const config = { dIn: 4, dOut: 4, numHeads: 2, causal: true };
    const dir = tmp();
    const graphFile = join(dir, "graph.json");
    writeFileSync(graphFile, JSON.stringify(toJSON(buildAttention(config))));
    const raw = Object.fromEntries(
      ["W_query", "W_key", "W_value", "out_proj"].map((n, k) => [
        n,
        Tensor.from(
          Array.from({ length: 16 }, (_, i) => Math.sin(i + 4 * k)),
          [4, 4],
        ),
      ]),
    );
    raw["out_bias"] = Tensor.from([0.1, -0.2, 0.3, 0], [4]);
    const weightsFile = join(dir, "weights.safetensors");
    writeFileSync(weightsFile, writeSafetensors(attentionWeights(config, raw)));
    const x = Tensor.from(
      Array.from({ length: 24 }, (_, i) => Math.cos(i)),
      [2, 3, 4],
    );
    const given = await cli("export", graphFile, "-o", join(dir, "given.onnx"), "--weights", weightsFile);
    expect(given.out[0]).toMatch(/weights from .*weights\.safetensors$/);
    const seeded = await cli("export", graphFile, "-o", join(dir, "seeded.onnx"), "--seed", "3");
    expect(seeded.out[0]).toMatch(/random weights \(seed 3\): give real ones with --weights$/);
    const a = await runModel(join(dir, "given.onnx"), { x });
    const b = await runModel(join(dir, "seeded.onnx"), { x });
    expect(a.shape).toEqual([2, 3, 4]);
    expect(compare(a, b, { abs: 1e-6, rel: 0 }).ok).toBe(false); // different weights, different outputs
  });

  it("a decode graph document exports with past inputs and present outputs, no --dims for its caches", async () => {
    const dir = tmp();
    const graphFile = join(dir, "decode.json");
    writeFileSync(
      graphFile,
      JSON.stringify(toJSON(buildAttention({ dIn: 8, dOut: 8, numHeads: 2, causal: true }, { decode: true }))),
    );
    const path = join(dir, "decode.onnx");
    const { code } = await cli("export", graphFile, "-o", path);
    expect(code).toBe(0);
    const session = await ort.InferenceSession.create(readFileSync(path));
    expect([...session.inputNames]).toEqual(["x", "k.cache.state", "v.cache.state"]);
    expect([...session.outputNames]).toEqual(["output", "k.cache", "v.cache"]);
    // A 2-token prompt over an empty past: the presents hold those 2 positions.
    const feeds = {
      x: new ort.Tensor(
        "float32",
        Float32Array.from({ length: 16 }, (_, i) => Math.sin(i)),
        [1, 2, 8],
      ),
      "k.cache.state": new ort.Tensor("float32", new Float32Array(0), [1, 2, 0, 4]),
      "v.cache.state": new ort.Tensor("float32", new Float32Array(0), [1, 2, 0, 4]),
    };
    const got = await session.run(feeds);
    await session.release();
    expect(got["k.cache"]!.dims).toEqual([1, 2, 2, 4]);
    expect(got["output"]!.dims).toEqual([1, 2, 8]);
  });

  it("a user op fails the export naming its node; a missing -o is a usage error", async () => {
    const softcap = defineOp<{ cap: number }>({
      kind: "softcap",
      doc: "tanh(s / cap) · cap",
      inputs: [{ name: "x" }],
      attrs: { cap: { type: "number" } },
      inferShape: ([x]) => x!,
    });
    const b = new GraphBuilder({ registry: createOpRegistry([softcap]) });
    const dir = tmp();
    const graphFile = join(dir, "graph.json");
    writeFileSync(
      graphFile,
      JSON.stringify(toJSON(b.output(b.add("softcap", "capped", { x: b.input("x", [2]) }, { cap: 1 })).build())),
    );
    const opsFile = join(dir, "softcap-ops.mjs");
    writeFileSync(
      opsFile,
      `export const ops = [{ kind: "softcap", doc: "cap", inputs: [{ name: "x" }], attrs: { cap: { type: "number" } }, inferShape: ([x]) => x }];`,
    );
    const failed = await cli("export", graphFile, "-o", join(dir, "m.onnx"), "--ops", opsFile);
    expect(failed.code).toBe(1);
    expect(failed.err[0]).toMatch(/^attngraph: OnnxExportError: capped: user op softcap has no ONNX form/);
    const usage = await cli("export", graphFile);
    expect(usage.code).toBe(2);
    expect(usage.err[0]).toMatch(/^attngraph: missing -o <model.onnx>/);
  });

  // Each was a Node stack trace (exit 1): now one FileError line naming the path, the flag and the reason.
  describe("a file it cannot read or write is one line naming the path and the reason", () => {
    const CASE = join(goldenDir, "t1-causal-b2-d8-h2.json");
    const graphFile = () => {
      const path = join(tmp(), "graph.json");
      writeFileSync(path, JSON.stringify(toJSON(buildAttention({ dIn: 4, dOut: 4, numHeads: 2 }))));
      return path;
    };

    it("-o into a folder that does not exist", async () => {
      const path = join(tmp(), "no/such/dir/m.onnx");
      expect(await cli("export", CASE, "-o", path)).toEqual({
        code: 1,
        out: [],
        err: [
          `attngraph: FileError: -o ${path}: cannot write the file, expected a writable file in an existing folder, got its folder does not exist (ENOENT)`,
        ],
      });
    });

    it("-o a folder", async () => {
      const dir = tmp();
      expect(await cli("export", CASE, "-o", dir)).toMatchObject({
        code: 1,
        out: [],
        err: [
          `attngraph: FileError: -o ${dir}: cannot write the file, expected a writable file in an existing folder, got it is a folder (EISDIR)`,
        ],
      });
    });

    it.skipIf(!existsSync("/dev/full"))("-o /dev/full (a full disk)", async () => {
      expect(await cli("export", CASE, "-o", "/dev/full")).toMatchObject({
        code: 1,
        out: [],
        err: [
          "attngraph: FileError: -o /dev/full: cannot write the file, expected a writable file in an existing folder, got no space left on the device (ENOSPC)",
        ],
      });
    });

    it("--weights that does not exist, --weights a folder", async () => {
      const dir = tmp();
      const out = join(dir, "m.onnx");
      expect(await cli("export", graphFile(), "-o", out, "--weights", join(dir, "nope.safetensors"))).toMatchObject({
        code: 1,
        err: [
          `attngraph: FileError: --weights ${join(dir, "nope.safetensors")}: cannot read the file, expected a readable file, got no such file or folder (ENOENT)`,
        ],
      });
      expect(await cli("export", graphFile(), "-o", out, "--weights", dir)).toMatchObject({
        code: 1,
        err: [
          `attngraph: FileError: --weights ${dir}: cannot read the file, expected a readable file, got it is a folder (EISDIR)`,
        ],
      });
      expect(existsSync(out)).toBe(false);
    });
  });

  describe("a flag that does nothing for the file given is a usage error", () => {
    const CASE = join(goldenDir, "t1-causal-b2-d8-h2.json");

    it("a golden case brings its weights: --weights, --seed, --dims, --ops", async () => {
      for (const flag of [
        ["--weights", "w.safetensors"],
        ["--seed", "1"],
        ["--dims", "B=1"],
        ["--ops", "m.mjs"],
      ]) {
        const r = await cli("export", CASE, "-o", join(tmp(), "m.onnx"), ...flag);
        expect([r.code, r.err[0]]).toEqual([
          2,
          `attngraph: export: ${flag[0]} does nothing with a golden case: it brings its own weights and uses the built-in ops (these are for a graph document)`,
        ]);
      }
      const train = await cli(
        "export",
        join(goldenTrainDir, "block-causal-b2-t10-e16-h4.json"),
        "-o",
        join(tmp(), "m.onnx"),
        "--fused-qkv",
      );
      expect([train.code, train.err[0]]).toEqual([
        2,
        expect.stringMatching(/^attngraph: export: --fused-qkv does nothing with a golden-train case/),
      ]);
    });

    it("a graph document: --fused-qkv; --seed and --dims beside --weights; a --dims no weight has", async () => {
      const dir = tmp();
      const graphFile = join(dir, "graph.json");
      writeFileSync(graphFile, JSON.stringify(toJSON(buildAttention({ dIn: 4, dOut: 4, numHeads: 2 }))));
      const out = join(dir, "m.onnx");
      expect((await cli("export", graphFile, "-o", out, "--fused-qkv")).err[0]).toMatch(
        /^attngraph: export: --fused-qkv does nothing with a graph document/,
      );
      expect((await cli("export", graphFile, "-o", out, "--weights", "w.safetensors", "--seed", "2")).err[0]).toMatch(
        /^attngraph: export: --seed does nothing with --weights/,
      );
      const dims = await cli("export", graphFile, "-o", out, "--dims", "B=2,T=8");
      expect([dims.code, dims.err[0]]).toEqual([
        2,
        `attngraph: --dims B: no weight of ${graphFile} has this symbolic dim (theirs: none; only weights are drawn; an input's dims stay symbolic in the model)`,
      ]);
      expect(existsSync(out)).toBe(false);
    });

    it("a repro: said so, with the commands that take one", async () => {
      const path = join(tmp(), "r.json");
      writeFileSync(path, JSON.stringify({ format: "attngraph.repro", version: 1 }));
      expect((await cli("export", path, "-o", join(tmp(), "m.onnx"))).err[0]).toBe(
        `attngraph: export: ${path} is a repro, expected a golden case or a graph document; a repro goes to attngraph run or attngraph diff`,
      );
    });
  });
});
