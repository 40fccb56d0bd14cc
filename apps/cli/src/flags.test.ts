import { goldenDir } from "@attngraph/testkit";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkCommandLine, refuseFlags } from "./flags.js";
import { UsageError } from "./io.js";
import { main } from "./main.js";

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

const CASE = join(goldenDir, "t1-causal-b2-d8-h2.json");
/** Where a model would go if a refused command ran anyway: not the working directory. */
const OUT = join(mkdtempSync(join(tmpdir(), "attngraph-flags-")), "m.onnx");

describe("a flag of another command is a usage error naming it, the command and what it takes", () => {
  it("export --steps 5 (the model was written, the 5 dropped)", async () => {
    expect(await cli("export", CASE, "-o", OUT, "--steps", "5")).toEqual({
      code: 2,
      out: [],
      err: [
        "attngraph: --steps is not an option of export; export takes -o/--output, --contrib, --weights, --seed, --dims, --ops, --fused-qkv, --explain",
      ],
    });
  });

  it("run --steps 3 (the case ran, the 3 dropped)", async () => {
    expect(await cli("run", CASE, "--steps", "3")).toMatchObject({
      code: 2,
      out: [],
      err: [
        "attngraph: --steps is not an option of run; run takes --executor, --tap, --fused-qkv, --explain, --threads, --ops, --inputs, --dims",
      ],
    });
  });

  // One flag per command that another command takes; none of them may run.
  it.each([
    ["demo", "block", "--tap", "x"],
    ["conformance", goldenDir, "--explain"],
    ["diff", CASE, "--executor", "cpu,wasm"],
    ["export", CASE, "--threads", "2"],
    ["train", "copy", "--fused-qkv"],
    ["run", CASE, "-o", OUT],
  ])("%s %s %s", async (command, operand, flag, ...value) => {
    const r = await cli(command, operand, flag, ...value);
    expect(r.code).toBe(2);
    expect(r.out).toEqual([]);
    expect(r.err[0]).toMatch(new RegExp(`^attngraph: ${flag} is not an option of ${command}; ${command} takes -`));
  });

  // `--weights "$W"` with W unset exported seeded random weights; `--seed ""` seeded with 0.
  it("an option given an empty value", async () => {
    expect(await cli("export", CASE, "-o", OUT, "--weights", "")).toMatchObject({
      code: 2,
      out: [],
      err: ['attngraph: --weights: expected a value, got ""'],
    });
    expect((await cli("diff", CASE, "--executors", "cpu,wasm", "--tolerance=")).err).toEqual([
      'attngraph: --tolerance: expected a value, got ""',
    ]);
    expect((await cli("train", "copy", "--seed", " ")).err).toEqual(['attngraph: --seed: expected a value, got " "']);
  });

  it("an argument after the one a command takes", async () => {
    expect(await cli("run", CASE, "extra.json")).toMatchObject({
      code: 2,
      err: [`attngraph: run: unexpected argument "extra.json": run takes one <case.json | model.onnx | repro.json>`],
    });
    expect((await cli("conformance", goldenDir, goldenDir)).code).toBe(2);
  });
});

describe("checkCommandLine", () => {
  const line = { flags: ["output", "seed"], operand: "<file>" };
  const shortOf = (f: string) => (f === "output" ? "o" : undefined);
  const opt = (name: string, rawName = `--${name}`) => ({ kind: "option", name, rawName }) as const;
  const pos = (value: string) => ({ kind: "positional", value }) as const;

  it("passes the command's own flags and --help", () => {
    expect(() =>
      checkCommandLine("export", line, [pos("export"), pos("a"), opt("output", "-o"), opt("help")], shortOf),
    ).not.toThrow();
  });

  it("names the flag as typed and lists the command's flags with their short forms", () => {
    expect(() => checkCommandLine("export", line, [pos("export"), opt("steps")], shortOf)).toThrow(
      new UsageError("--steps is not an option of export; export takes -o/--output, --seed"),
    );
  });
});

describe("refuseFlags", () => {
  it("names the first flag that is set; unset, false and empty lists pass", () => {
    expect(() => refuseFlags("run", "with a repro", { "--a": undefined, "--b": false, "--c": [] })).not.toThrow();
    expect(() => refuseFlags("run", "with a repro", { "--a": undefined, "--seed": "0", "--c": true })).toThrow(
      new UsageError("run: --seed does nothing with a repro"),
    );
  });
});
