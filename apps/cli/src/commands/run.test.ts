// `attngraph run` given what it does not take: a graph document (said so, with the commands that take one), flags a
// repro would drop, and a file that can be read only once (a pipe: `cat case.json | attngraph run /dev/stdin`).
import { buildAttention } from "@attngraph/attention";
import { toJSON } from "@attngraph/graph";
import { goldenDir } from "@attngraph/testkit";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { main } from "../main.js";

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

const tmp = () => mkdtempSync(join(tmpdir(), "attngraph-run-"));
const CASE = join(goldenDir, "t1-causal-b2-d8-h2.json");

describe("attngraph run", () => {
  it("a graph document: says it is one, what run takes, and which commands take a graph", async () => {
    const path = join(tmp(), "graph.json");
    writeFileSync(path, JSON.stringify(toJSON(buildAttention({ dIn: 4, dOut: 4, numHeads: 2 }))));
    expect(await cli("run", path)).toEqual({
      code: 2,
      out: [],
      err: [
        `attngraph: run: ${path} is a graph document, expected a golden case or a repro; a graph document goes to attngraph diff (with --dims) or attngraph export`,
      ],
    });
  });

  it("a repro replays on the executors it names: --executor, --tap, --threads … are refused, not dropped", async () => {
    const path = join(tmp(), "r.json");
    writeFileSync(path, JSON.stringify({ format: "attngraph.repro", version: 1 }));
    const refused = await cli("run", path, "--executor", "wasm");
    expect(refused).toMatchObject({
      code: 2,
      err: [
        "attngraph: run: --executor does nothing with a repro: it replays on the two executors it names, and prints its one node",
      ],
    });
    expect((await cli("run", path, "--tap", "all")).err[0]).toMatch(/^attngraph: run: --tap does nothing with a repro/);
    expect((await cli("run", path, "--threads", "2", "--executor", "wasm")).code).toBe(2);
  });

  it("a golden case refuses --ops", async () => {
    expect((await cli("run", CASE, "--ops", "m.mjs")).err[0]).toMatch(
      /^attngraph: run: --ops does nothing with a golden case/,
    );
  });

  it("a missing file or a folder is one line naming it", async () => {
    const dir = tmp();
    expect(await cli("run", join(dir, "nope.json"))).toMatchObject({
      code: 1,
      err: [
        `attngraph: FileError: ${join(dir, "nope.json")}: cannot read the file, expected a readable file, got no such file or folder (ENOENT)`,
      ],
    });
    expect((await cli("run", dir)).err[0]).toMatch(
      /^attngraph: FileError: .*: cannot read the file, .*got it is a folder \(EISDIR\)$/,
    );
  });

  // A FIFO gives its bytes to the first reader only, as /dev/stdin on a pipe does. The writer opens it a second time
  // (empty) after a second, so a second read gets nothing instead of hanging the test.
  it.skipIf(process.platform === "win32" || spawnSync("mkfifo", ["--version"]).error !== undefined)(
    "reads its file once: a pipe gives its bytes once",
    async () => {
      const fifo = join(tmp(), "case.fifo");
      expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
      const writer = spawn("sh", ["-c", 'cat "$1" > "$2"; sleep 1; : > "$2"', "sh", CASE, fifo], { stdio: "ignore" });
      try {
        const { code, out, err } = await cli("run", fifo);
        expect(err).toEqual([]);
        expect(out[0]).toBe("t1-causal-b2-d8-h2 on cpu");
        expect(code).toBe(0);
      } finally {
        writer.kill("SIGKILL");
      }
    },
  );
});
