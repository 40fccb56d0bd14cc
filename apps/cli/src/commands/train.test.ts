// `attngraph train copy` through the CLI entry point: from a random init the loss falls below 0.5 in the example's 50
// steps and the printed patterns are causal; from the golden case's parameters the printed losses are PyTorch's.
import { goldenTrainDir, loadAnyCase, type TrainCase } from "@attngraph/testkit";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { main } from "../main.js";
import { asciiPattern } from "./train.js";

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

const caseFile = join(goldenTrainDir, "seed-003-copy-task-v10-e32-h4-t8.json");

describe("attngraph train copy", () => {
  it("from a random init: loss below 0.5 within 50 steps, the copy learned, every head's pattern causal", async () => {
    const { code, out } = await cli("train", "copy", "--executor", "cpu");
    expect(code).toBe(0);
    expect(out.filter((l) => /^step/.test(l)).map((l) => Number(l.match(/step\s+(\d+)/)![1]))).toEqual([
      1, 10, 20, 30, 40, 50,
    ]);
    const final = Number(out.at(-1)!.replace("final loss ", ""));
    expect(final).toBeLessThan(0.5);
    const tokens = out.find((l) => l.includes("sample 0   tokens"))!.split("tokens ")[1];
    expect(out.find((l) => l.includes("predicted"))!.split("predicted ")[1]).toBe(tokens);
    // Each query row: weights after its own position are exactly 0 (the causal triangle).
    const rows = out.filter((l) => /^ {2}q\d/.test(l));
    expect(rows).toHaveLength(4 * 8);
    for (const row of rows) {
      const i = Number(row.match(/q(\d)/)![1]);
      const numbers = row.trim().split(/\s+/).slice(-8).map(Number);
      expect(
        numbers.slice(i + 1).every((w) => w === 0),
        row,
      ).toBe(true);
      expect(Math.abs(numbers.reduce((a, b) => a + b, 0) - 1)).toBeLessThan(0.03);
    }
  }, 120_000);

  it("--init <golden case> prints PyTorch's losses", async () => {
    const c = loadAnyCase(caseFile).case as TrainCase;
    const expected = c.expected["losses"]!.toArray();
    const { code, out } = await cli("train", "copy", "--init", caseFile);
    expect(code).toBe(0);
    for (const line of out.filter((l) => l.startsWith("step"))) {
      const [, s, loss] = line.match(/step\s+(\d+)\s+loss (\S+)/)!;
      expect(Math.abs(Number(loss) - expected[Number(s) - 1]!), line).toBeLessThan(1e-3);
    }
  }, 120_000);

  it("bad flags are usage errors naming the flag", async () => {
    expect((await cli("train", "copy", "--lr", "0")).err[0]).toMatch(/--lr: expected a number > 0, got "0"/);
    expect((await cli("train", "copy", "--steps", "2.5")).err[0]).toMatch(/--steps: expected an integer >= 1/);
    expect((await cli("train", "reverse")).err[0]).toMatch(/the one task is "copy"/);
    // One step at a learning rate that blows up: a loss that does not fall fails the command.
    const blown = await cli("train", "copy", "--steps", "3", "--lr", "1e30");
    expect([blown.code, blown.err[0]]).toEqual([1, expect.stringMatching(/the loss did not fall/)]);
    expect((await cli("train", "copy", "--dropout", "1")).err[0]).toMatch(/--dropout: expected a number in \[0, 1\)/);
    const notTrain = await cli("train", "copy", "--init", join(goldenTrainDir, "block-causal-b2-t10-e16-h4.json"));
    expect(notTrain.err[0]).toMatch(/--init: .* is not a golden-train "train" case/);
  });

  it("--dropout trains with attention dropout (a new mask every step): the loss falls, and differs from no dropout", async () => {
    const plain = await cli("train", "copy", "--executor", "cpu", "--steps", "20");
    const dropped = await cli("train", "copy", "--executor", "cpu", "--steps", "20", "--dropout", "0.1");
    expect(dropped.code, dropped.err.join("\n")).toBe(0);
    const losses = (r: { out: string[] }) =>
      r.out.filter((l) => l.startsWith("step")).map((l) => Number(l.match(/loss (\S+)/)![1]));
    expect(losses(dropped)[0]).not.toBe(losses(plain)[0]); // step 1 drops weights
    expect(losses(dropped).at(-1)!).toBeLessThan(losses(dropped)[0]!);
  }, 120_000);

  it("--init given a graph document, a folder or a missing file; --seed beside --init; --threads without wasm", async () => {
    const dir = mkdtempSync(join(tmpdir(), "attngraph-train-"));
    writeFileSync(join(dir, "graph.json"), JSON.stringify({ format: "attngraph.graph", version: 1 }));
    expect(await cli("train", "copy", "--init", join(dir, "graph.json"))).toMatchObject({
      code: 2,
      err: [
        `attngraph: train --init: ${join(dir, "graph.json")} is a graph document, expected a golden case; a graph document goes to attngraph diff (with --dims) or attngraph export`,
      ],
    });
    expect(await cli("train", "copy", "--init", dir)).toMatchObject({
      code: 1,
      err: [
        `attngraph: FileError: --init ${dir}: cannot read the file, expected a readable file, got it is a folder (EISDIR)`,
      ],
    });
    expect((await cli("train", "copy", "--init", join(dir, "nope.json"))).err[0]).toMatch(
      /^attngraph: FileError: --init .*nope\.json: cannot read the file, .*\(ENOENT\)$/,
    );
    // With --init the data and the weights are the case's: the seed would change nothing.
    const seeded = await cli(
      "train",
      "copy",
      "--init",
      join(goldenTrainDir, "seed-003-copy-task-v10-e32-h4-t8.json"),
      "--seed",
      "5",
    );
    expect([seeded.code, seeded.out, seeded.err]).toEqual([
      2,
      [],
      ["attngraph: train: --seed does nothing with --init: the data and the initial weights come from the case"],
    ]);
    const threads = await cli("train", "copy", "--threads", "4");
    expect([threads.code, threads.out, threads.err]).toEqual([
      2,
      [],
      [
        "attngraph: --threads sets the wasm executor's threads, and the executors are cpu: add wasm or leave --threads out",
      ],
    ]);
  });

  it("a pattern row shades each weight and prints it", () => {
    const lines = asciiPattern(Float32Array.from([1, 0, 0.5, 0.5]), 2);
    expect(lines).toEqual(["       0 1", "  q0   @     1.00 0.00", "  q1   + +   0.50 0.50"]);
  });
});
