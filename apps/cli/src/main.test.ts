// The golden suite runs here through the same entry point users call (`attngraph conformance <dir>`), over the copy of
// the cases kept in @attngraph/testkit, so the project's tests never reach outside the repo.
import { goldenDir, goldenTrainDir } from "@attngraph/testkit";
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { main } from "./main.js";

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

const caseCount = readdirSync(goldenDir).filter((f) => f.endsWith(".json")).length;

describe("attngraph conformance", () => {
  for (const flags of [[], ["--tap", "all"], ["--tap", "none"], ["--fused-qkv"]]) {
    it(`passes every golden case on cpu ${flags.join(" ")}`, async () => {
      const { code, out } = await cli("conformance", goldenDir, "--executor", "cpu", ...flags);
      expect(out.filter((l) => l.startsWith("FAIL"))).toEqual([]);
      expect(out.at(-1)).toBe(`${caseCount} passed, 0 failed`);
      expect(code).toBe(0);
    });
  }

  it("passes every golden case on wasm with --threads 2 (its worker pool), and refuses a bad thread count", async () => {
    const { code, out } = await cli("conformance", goldenDir, "--executor", "wasm", "--threads", "2");
    expect(out.filter((l) => l.startsWith("FAIL"))).toEqual([]);
    expect(out.at(-1)).toBe(`${caseCount} passed, 0 failed`);
    expect(code).toBe(0);
    for (const bad of ["0", "17", "1.5", "two"]) {
      expect(await cli("conformance", goldenDir, "--executor", "wasm", "--threads", bad)).toMatchObject({
        code: 2,
        out: [],
        err: [`attngraph: --threads: expected a whole number from 1 to 16, got "${bad}"`],
      });
    }
  });

  it("reports a malformed case by file and field as a failed case, and exits 1", async () => {
    const dir = mkdtempSync(join(tmpdir(), "attngraph-cases-"));
    copyFileSync(join(goldenDir, "t1-causal-b2-d8-h2.json"), join(dir, "a-good.json"));
    writeFileSync(
      join(dir, "b-broken.json"),
      JSON.stringify({ name: "broken", source: "x", config: { dIn: 8, dOut: 8, numHeads: 3 } }),
    );
    writeFileSync(join(dir, "c-garbage.json"), "{ not json");
    const { code, out } = await cli("conformance", dir);
    expect(out[0]).toMatch(/^PASS t1-causal/);
    expect(out[1]).toMatch(/^FAIL b-broken .*b-broken\.json: \$\.config\.dOut/);
    expect(out[2]).toMatch(/^FAIL c-garbage .*c-garbage\.json/);
    expect(out.at(-1)).toBe("1 passed, 2 failed");
    expect(code).toBe(1);
  });

  it("a value beyond float32 in a case file fails the case by its JSON path (it would load as Infinity)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "attngraph-cases-"));
    const c = JSON.parse(readFileSync(join(goldenDir, "t1-causal-b2-d8-h2.json"), "utf8"));
    c.inputs.x.data[0] = 1e39;
    writeFileSync(join(dir, "huge.json"), JSON.stringify(c));
    const { code, out } = await cli("conformance", dir);
    expect(out[0]).toMatch(/^FAIL huge .*huge\.json: \$\.inputs\.x\.data\[0\]: outside the float32 range/);
    expect(out.at(-1)).toBe("0 passed, 1 failed");
    expect(code).toBe(1);
  });

  it("a wrong number fails the case, naming the tensor and the worst element", async () => {
    const dir = mkdtempSync(join(tmpdir(), "attngraph-cases-"));
    const c = JSON.parse((await import("node:fs")).readFileSync(join(goldenDir, "t1-causal-b2-d8-h2.json"), "utf8"));
    c.expected.output.data[3] += 0.01;
    writeFileSync(join(dir, "tampered.json"), JSON.stringify(c));
    const { code, out } = await cli("conformance", dir);
    expect(out[0]).toMatch(/^FAIL t1-causal-b2-d8-h2 {2}output: 1 of 16 off, worst at 3/);
    expect(out.at(-1)).toBe("0 passed, 1 failed");
    expect(code).toBe(1);
  });

  it("a case that compares nothing fails; --tap none names the tensors it cannot compare", async () => {
    const dir = mkdtempSync(join(tmpdir(), "attngraph-cases-"));
    const c = JSON.parse(readFileSync(join(goldenDir, "t1-causal-b2-d8-h2.json"), "utf8"));
    writeFileSync(join(dir, "a-empty.json"), JSON.stringify({ ...c, name: "empty", expected: {} }));
    writeFileSync(
      join(dir, "b-weights-only.json"),
      JSON.stringify({ ...c, name: "weights-only", expected: { weights: c.expected.weights } }),
    );
    writeFileSync(join(dir, "c-full.json"), JSON.stringify({ ...c, name: "full" }));
    const { code, out } = await cli("conformance", dir, "--tap", "none");
    expect(out).toEqual([
      "FAIL empty  nothing to compare: expected holds no tensors",
      "FAIL weights-only  nothing to compare: not compared under --tap none: weights",
      expect.stringMatching(
        /^PASS full {2}\(1 tensors, worst: output .*; not compared under --tap none: queries, keys, values, scores, weights, context\)$/,
      ),
      "1 passed, 2 failed",
    ]);
    expect(code).toBe(1);
  });

  it("refuses unknown and unbuilt executors with a clear message", async () => {
    expect(await cli("conformance", goldenDir, "--executor", "tpu")).toMatchObject({
      code: 2,
      err: [expect.stringMatching(/unknown executor "tpu"/)],
    });
    expect((await cli("conformance")).code).toBe(2);
    for (const name of ["__proto__", "hasOwnProperty", "valueOf", "constructor", "toString"]) {
      expect(await cli("conformance", goldenDir, "--executor", name)).toMatchObject({
        code: 2,
        out: [],
        err: [`attngraph: unknown executor "${name}"; available: cpu, wasm, webgpu`],
      });
    }
  });

  it("runs every golden case on the wasm executor (initialised by compile)", async () => {
    const { code, out } = await cli("conformance", goldenDir, "--executor", "wasm");
    expect(out.at(-1)).toMatch(/^\d+ passed, 0 failed$/);
    expect(code).toBe(0);
  });
});

// docs/reliability.md: every message under 600 characters. The user's string in it is cut to 120 with "…".
describe("long user strings make short messages", () => {
  const huge = (c: string) => c.repeat(4_000_000);

  it("a 4 MB executor name", async () => {
    const { code, err } = await cli("conformance", goldenDir, "--executor", huge("e"));
    expect(code).toBe(2);
    expect(err).toHaveLength(1);
    expect(err[0]!.length).toBeLessThan(600);
    expect(err[0]).toMatch(/^attngraph: unknown executor "e+…e+"; available: cpu, wasm, webgpu$/);
  });

  it("a 4 MB command: the help text follows, the command is cut", async () => {
    const { code, err } = await cli(huge("c"));
    expect(code).toBe(2);
    expect(err[0]).toMatch(/^attngraph: unknown command "c+…c+"\nusage: attngraph/);
    expect(err[0]).not.toContain("c".repeat(121));
  });

  it("a 4 MB unknown option", async () => {
    const { code, err } = await cli("conformance", goldenDir, `--${huge("o")}`);
    expect(code).toBe(2);
    expect(err[0]!.length).toBeLessThan(600);
    expect(err[0]).toContain("…");
  });

  it("a case with a 1 MB name gets a short line", async () => {
    const dir = mkdtempSync(join(tmpdir(), "attngraph-cases-"));
    const c = JSON.parse(readFileSync(join(goldenDir, "t1-causal-b2-d8-h2.json"), "utf8"));
    writeFileSync(join(dir, "long-name.json"), JSON.stringify({ ...c, name: "n".repeat(1_000_000) }));
    writeFileSync(join(dir, "long-name-bad.json"), JSON.stringify({ ...c, name: "n".repeat(1_000_000), expected: {} }));
    const { out } = await cli("conformance", dir);
    expect(out[0]).toMatch(/^FAIL n+…n+ {2}nothing to compare/);
    expect(out[1]).toMatch(/^PASS n+…n+ {2}\(7 tensors/);
    for (const line of out) expect(line.length).toBeLessThan(600);
  });
});

describe("attngraph run", () => {
  it("prints the tapped tensors of one case in PyTorch's format", async () => {
    const { code, out } = await cli("run", join(goldenDir, "seed-002-mha-outproj-eval.json"), "--tap", "weights");
    expect(code).toBe(0);
    const text = out.join("\n");
    expect(text).toContain("weights [1, 2, 3, 3]");
    expect(text).toMatch(/tensor\(\[\[\[\[1\.0000(e\+00)?, 0\.0000(e\+00)?, 0\.0000(e\+00)?\],/);
  });

  it("runs a golden-train case forward and prints its outputs (the block of the worked example)", async () => {
    const { code, out } = await cli("run", join(goldenTrainDir, "block-causal-b2-t10-e16-h4.json"), "--tap", "ln1");
    expect(code).toBe(0);
    expect(out[0]).toBe("block-causal-b2-t10-e16-h4 on cpu");
    expect(out.join("\n")).toMatch(/^ln1 \[2, 10, 16\]$/m);
  });

  it("names an unknown tap", async () => {
    const { code, err } = await cli("run", join(goldenDir, "seed-002-mha-outproj-eval.json"), "--tap", "wieghts");
    expect(code).toBe(1);
    expect(err[0]).toMatch(/tap wieghts: no node of this name/);
  });
});

describe("attngraph demo", () => {
  it("demo block prints the block's intermediates from the stream, each matching PyTorch", async () => {
    const { code, out } = await cli("demo", "block");
    const text = out.join("\n");
    for (const n of [
      "ln1",
      "attention.weights",
      "attention",
      "residual",
      "ln2",
      "mlp.hidden",
      "mlp.gelu",
      "mlp",
      "output",
    ]) {
      expect(text).toMatch(new RegExp(`^${n.replace(".", "\\.")} \\[[^\\]]*\\]  matches PyTorch$`, "m"));
    }
    expect(text).toContain("every intermediate matches PyTorch (float64 reference, tolerance 0.0001): yes");
    expect(code).toBe(0);
  });

  it("an unknown demo is a usage error", async () => {
    const { code, err } = await cli("demo", "gpt");
    expect(code).toBe(2);
    expect(err[0]).toMatch(/unknown demo "gpt": expected attention or block/);
  });

  it("prints the plan and every intermediate tensor, and matches PyTorch", async () => {
    const { code, out } = await cli("demo");
    const text = out.join("\n");
    for (const n of ["queries", "keys", "values", "scores", "weights", "context", "output"])
      expect(text).toMatch(new RegExp(`^${n} \\[`, "m"));
    expect(text).toContain("plan: 16 steps on cpu");
    expect(text).toContain(
      "(untapped, the same graph runs in 13 steps: fused scores + masked + weights + context.heads → attention)",
    );
    expect(text).toContain("output matches PyTorch (float64 reference, tolerance 0.0001): yes");
    expect(code).toBe(0);
  });
});
