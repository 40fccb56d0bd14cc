// `attngraph diff` through main(), as a user runs it: golden cases agree across cpu and wasm (forward and backward);
// a user op whose wasm kernel has a planted off-by-one (an --ops module) is named first, and the repro the command
// writes replays the disagreement through `attngraph run`. Bad input is a one-line error.
import { buildAttention } from "@attngraph/attention";
import { insertAfter, toJSON } from "@attngraph/graph";
import { goldenDir, goldenGradDir } from "@attngraph/testkit";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ops } from "../fixtures/off-by-one.test-ops.js";
import { main } from "../main.js";
import { createOpRegistry } from "@attngraph/graph";

const OPS = join(dirname(fileURLToPath(import.meta.url)), "../fixtures/off-by-one.test-ops.ts");

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

const tmp = () => mkdtempSync(join(tmpdir(), "attngraph-diff-"));

describe("attngraph diff", () => {
  it("a golden-grad case agrees on cpu and wasm at every node of its forward and backward graph", async () => {
    const { code, out } = await cli(
      "diff",
      join(goldenGradDir, "gqa-h4-kv2-causal-b2-t8-d16-grad.json"),
      "--executors",
      "cpu,wasm",
    );
    expect(out[0]).toMatch(
      /^diff of gqa-h4-kv2-causal-b2-t8-d16-grad: wasm against cpu · tolerance abs 0.0001, rel 0.0001/,
    );
    expect(out.some((l) => /^W_query\.grad\s+\S+/.test(l))).toBe(true); // the backward is part of it
    expect(out.at(-1)).toMatch(/^\d+ node\(s\) compared: wasm agree with cpu within tolerance$/);
    expect(code).toBe(0);
  });

  it("a folder: every golden case agrees on cpu and wasm, one line each", async () => {
    const { code, out } = await cli("diff", goldenDir, "--executors", "cpu,wasm");
    const count = readdirSync(goldenDir).filter((f) => f.endsWith(".json")).length;
    expect(out.filter((l) => l.startsWith("AGREE "))).toHaveLength(count);
    expect(out.at(-1)).toBe(`${count} agree, 0 disagree or failed`);
    expect(code).toBe(0);
  });

  it("--tap none compares the outputs of the fused run", async () => {
    const { code, out } = await cli(
      "diff",
      join(goldenDir, "key-padding-b3-t6-d8-h2.json"),
      "--executors",
      "cpu,wasm",
      "--tap",
      "none",
    );
    expect(out.at(-1)).toBe("1 node(s) compared: wasm agree with cpu within tolerance");
    expect(code).toBe(0);
  });

  it("names a user op with an off-by-one wasm kernel first; its repro replays the disagreement", async () => {
    const dir = tmp();
    const graph = insertAfter(
      buildAttention({ dIn: 8, dOut: 12, numHeads: 3, causal: true }, { registry: createOpRegistry(ops) }),
      "scores",
      (b, s) => b.add("double", "scores.doubled", { x: s }),
    );
    writeFileSync(join(dir, "graph.json"), JSON.stringify(toJSON(graph)));
    const repro = join(dir, "repro.json");
    const d = await cli(
      "diff",
      join(dir, "graph.json"),
      "--executors",
      "cpu,wasm",
      "--ops",
      OPS,
      "--dims",
      "B=2,T=5",
      "--repro",
      repro,
    );
    expect(d.code).toBe(1);
    expect(d.out.find((l) => l.includes("<- first disagreement"))).toMatch(/^scores\.doubled\s+double\s+✗/);
    expect(d.out).toContain(
      `  alone, on cpu's values of its inputs, it still disagrees: the double kernel on wasm is the place to look`,
    );
    expect(
      d.out.some((l) => /^first disagreement: node scores\.doubled \(op double\) on wasm: \d+ of 150 element/.test(l)),
    ).toBe(true);
    expect(JSON.parse(readFileSync(repro, "utf8"))).toMatchObject({
      format: "attngraph.repro",
      node: "scores.doubled",
      executor: "wasm",
    });

    const r = await cli("run", repro, "--ops", OPS);
    expect(r.out).toEqual([
      `replay of ${repro}: node scores.doubled (op double), wasm against cpu`,
      "  cpu: same output as recorded",
      "  wasm: same output as recorded",
      expect.stringMatching(/^ {2}wasm disagrees with cpu: \d+ of 150 element\(s\) out of tolerance, max abs /),
      "the disagreement reproduces",
    ]);
    expect(r.code).toBe(1);
    // Without the module the op kind is unknown: said so, naming the field.
    const bare = await cli("run", repro);
    expect(bare.err[0]).toMatch(/^attngraph: ReproFormatError: \$\.graph.*scores\.doubled.*double/);
    expect(bare.code).toBe(1);
  });

  it("bad input: no executors, one executor, a symbolic dim without --dims, a malformed repro, a missing --ops module", async () => {
    const dir = tmp();
    const file = join(goldenDir, "t1-causal-b2-d8-h2.json");
    expect((await cli("diff", file)).err[0]).toMatch(/diff needs --executors/);
    expect((await cli("diff", file, "--executors", "cpu")).err[0]).toMatch(/two executors or more/);
    expect((await cli("diff", file, "--executors", "cpu,wasm", "--tolerance", "x")).err[0]).toMatch(
      /--tolerance: expected abs\[,rel\]/,
    );
    writeFileSync(join(dir, "g.json"), JSON.stringify(toJSON(buildAttention({ dIn: 4, dOut: 4, numHeads: 2 }))));
    const dims = await cli("diff", join(dir, "g.json"), "--executors", "cpu,wasm");
    expect(dims.err[0]).toMatch(/x has the symbolic dim \w+: give its size with --dims/);
    expect(dims.code).toBe(2);
    writeFileSync(join(dir, "bad.json"), JSON.stringify({ format: "attngraph.repro", version: 1, node: "n" }));
    const bad = await cli("run", join(dir, "bad.json"));
    writeFileSync(join(dir, "torn.json"), `{"format": "attngraph.repro", "version": 1, `);
    expect((await cli("run", join(dir, "torn.json"))).err[0]).toMatch(/^attngraph: /);
    expect(bad.err[0]).toMatch(/ReproFormatError: \$\.kind: missing or not a string/);
    expect(bad.code).toBe(1);
    expect((await cli("diff", file, "--executors", "cpu,wasm", "--ops", join(dir, "none.mjs"))).err[0]).toMatch(
      /--ops .*none\.mjs: cannot load the module/,
    );
  });

  describe("a repro it cannot write, a size it cannot hold: one line, never a stack trace", () => {
    /** A graph whose user op disagrees on wasm (so diff writes a repro), in a fresh folder. */
    const disagreeing = () => {
      const dir = tmp();
      const graph = insertAfter(
        buildAttention({ dIn: 4, dOut: 4, numHeads: 2, causal: true }, { registry: createOpRegistry(ops) }),
        "scores",
        (b, s) => b.add("double", "scores.doubled", { x: s }),
      );
      writeFileSync(join(dir, "graph.json"), JSON.stringify(toJSON(graph)));
      return { dir, file: join(dir, "graph.json") };
    };

    it("--repro into a folder that does not exist", async () => {
      const { dir, file } = disagreeing();
      const repro = join(dir, "no/such/dir/r.json");
      const d = await cli("diff", file, "--executors", "cpu,wasm", "--ops", OPS, "--dims", "B=1,T=3", "--repro", repro);
      expect(d.err).toEqual([
        `attngraph: FileError: --repro ${repro}: cannot write the file, expected a writable file in an existing folder, got its folder does not exist (ENOENT)`,
      ]);
      expect(d.code).toBe(1);
    });

    it("--repro a folder", async () => {
      const { dir, file } = disagreeing();
      const d = await cli("diff", file, "--executors", "cpu,wasm", "--ops", OPS, "--dims", "B=1,T=3", "--repro", dir);
      expect(d.err).toEqual([
        `attngraph: FileError: --repro ${dir}: cannot write the file, expected a writable file in an existing folder, got it is a folder (EISDIR)`,
      ]);
      expect(d.code).toBe(1);
    });

    // It drew 16 GB of random numbers for three minutes before the runtime refused the run (or crashed making an
    // array past 2^32 elements with B=2): refused before anything is allocated.
    it("--dims B=1,T=1000000000", async () => {
      const { file } = disagreeing();
      const d = await cli("diff", file, "--executors", "cpu,wasm", "--ops", OPS, "--dims", "B=1,T=1000000000");
      expect(d.err).toEqual([
        `attngraph: ShapeError: ${file}: x [1, 1000000000, 4]: too large to fill with random values, expected at most 4 GiB of float32 values in all (the runtime's memory limit; give smaller --dims), got 14.9 GiB`,
      ]);
      expect(d.code).toBe(1);
    });
  });

  describe("a flag that does nothing for the file given is a usage error", () => {
    const file = join(goldenDir, "t1-causal-b2-d8-h2.json");

    it("--dims and --seed with a golden case or a repro; --fused-qkv with a graph document", async () => {
      expect(await cli("diff", file, "--executors", "cpu,wasm", "--dims", "B=2")).toMatchObject({
        code: 2,
        err: [
          "attngraph: diff: --dims does nothing with a golden case: it brings its own inputs and weights (--dims and --seed are for a graph document)",
        ],
      });
      expect((await cli("diff", file, "--executors", "cpu,wasm", "--seed", "0")).code).toBe(2);
      const dir = tmp();
      writeFileSync(join(dir, "r.json"), JSON.stringify({ format: "attngraph.repro", version: 1 }));
      expect((await cli("diff", join(dir, "r.json"), "--executors", "cpu,wasm", "--seed", "1")).err[0]).toMatch(
        /^attngraph: diff: --seed does nothing with a repro/,
      );
      writeFileSync(join(dir, "g.json"), JSON.stringify(toJSON(buildAttention({ dIn: 4, dOut: 4, numHeads: 2 }))));
      expect(
        (await cli("diff", join(dir, "g.json"), "--executors", "cpu,wasm", "--dims", "B=1,T=2", "--fused-qkv")).err[0],
      ).toMatch(/^attngraph: diff: --fused-qkv does nothing with a graph document/);
      expect((await cli("diff", join(dir, "g.json"), "--executors", "cpu,wasm", "--dims", "B=1,T=2,S=3")).err[0]).toBe(
        `attngraph: --dims S: no input or weight of ${join(dir, "g.json")} has this symbolic dim (theirs: B, T)`,
      );
    });

    it("--ops with a module that exports nothing", async () => {
      const dir = tmp();
      writeFileSync(join(dir, "empty.mjs"), "export const op = [];\n");
      expect(await cli("diff", file, "--executors", "cpu,wasm", "--ops", join(dir, "empty.mjs"))).toMatchObject({
        code: 2,
        out: [],
        err: [
          `attngraph: --ops ${join(dir, "empty.mjs")}: exports no op and no kernel, expected "ops" (an array of defineOp() results) or "kernels" ({ executor: { kind: kernel } }), got exports op`,
        ],
      });
    });
  });
});
