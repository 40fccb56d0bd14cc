import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Impl } from "./impls/types.js";
import { attngraphImpl } from "./impls/attngraph.js";
import { ortNodeImpl } from "./impls/ort.js";
import { tfjsImpl } from "./impls/tfjs.js";
import { main, type IO } from "./main.js";

function capture(): IO & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (l) => stdout.push(l), err: (l) => stderr.push(l) };
}

/** A peer that returns a fixed output, or throws on setup. */
function fakePeer(name: string, output: (n: number) => Float32Array | Error): Impl {
  return {
    name,
    family: "peer",
    async setup(p) {
      const out = output("x" in p ? p.x.length : 0);
      if (out instanceof Error) throw out;
      return { threads: 1, run: async () => out, dispose: async () => undefined };
    },
  };
}

const quick = ["--shape", "2,6,8,2", "--runs", "3", "--warmup", "0"];

describe("main", () => {
  it("runs the cpu executor, prints the table and writes rows {impl, b, t, d, h, threads, medianMs}", async () => {
    const json = join(mkdtempSync(join(tmpdir(), "bench-")), "r.json");
    const io = capture();
    expect(await main([...quick, "--json", json], io, [attngraphImpl("cpu")])).toBe(0);
    const text = io.stdout.join("\n");
    expect(text).toMatch(/^cpu\s+1\s+3\s/m);
    expect(text).toContain("event-stream overhead");
    const r = JSON.parse(readFileSync(json, "utf8"));
    expect(r.rows).toHaveLength(1);
    expect(r.rows[0]).toMatchObject({ impl: "cpu", b: 2, t: 6, d: 8, h: 2, threads: 1, runs: 3, status: "ok" });
    expect(r.rows[0].medianMs).toBeGreaterThan(0);
    expect(r.streamOverhead.map((o: { mode: string }) => o.mode)).toEqual(["none", "events$", "tap-all"]);
  });

  it("--problem block runs the transformer block: its FLOP count, rows marked problem block, outputs checked", async () => {
    const json = join(mkdtempSync(join(tmpdir(), "bench-")), "r.json");
    const io = capture();
    const cpu = attngraphImpl("cpu");
    expect(
      await main(["--problem", "block", ...quick, "--json", json], io, [
        cpu,
        { ...cpu, name: "again", family: "peer" },
      ]),
    ).toBe(0);
    const text = io.stdout.join("\n");
    expect(text).toContain("attngraph bench: pre-norm transformer block forward");
    expect(text).toContain("24·b·T·d² + 2·b·T²·d");
    expect(text).toContain("shape b=2 T=6 d=8 heads=2 (19.6 kFLOP per forward)"); // 24·2·6·8² + 2·2·6²·8 = 18432 + 1152
    const r = JSON.parse(readFileSync(json, "utf8"));
    expect(r.meta.problem).toBe("block");
    expect(
      r.rows.map((x: { problem: string; status: string; flops: number }) => [x.problem, x.status, x.flops]),
    ).toEqual([
      ["block", "ok", 19_584],
      ["block", "ok", 19_584],
    ]);
    expect(r.rows[1].maxAbsDiff).toBe(0);
  });

  it("reports a peer that fails to load as unavailable and carries on", async () => {
    const json = join(mkdtempSync(join(tmpdir(), "bench-")), "r.json");
    const io = capture();
    const broken = fakePeer("broken", () => new Error("Cannot find module 'nope'"));
    expect(await main([...quick, "--json", json], io, [attngraphImpl("cpu"), broken])).toBe(0);
    expect(io.stdout.join("\n")).toMatch(/^broken\s+unavailable: Cannot find module 'nope'$/m);
    expect(JSON.parse(readFileSync(json, "utf8")).rows[1]).toMatchObject({
      impl: "broken",
      status: "unavailable",
      medianMs: null,
    });
  });

  it("marks the output that differs from the others by more than 1e-3 relative, and exits 1", async () => {
    const json = join(mkdtempSync(join(tmpdir(), "bench-")), "r.json");
    const io = capture();
    const cpu = attngraphImpl("cpu");
    const alsoRight: Impl = { ...cpu, name: "also-right", family: "peer" };
    const slightlyOff: Impl = {
      name: "slightly-off",
      family: "peer",
      setup: async (p, o) => {
        const r = await cpu.setup(p, o);
        return { ...r, run: async () => (await r.run()).map((v, i) => (i === 0 ? v + 1e-4 : v)) };
      },
    };
    const wrong = fakePeer("wrong", (n) => new Float32Array(n).fill(0.25));
    expect(await main([...quick, "--json", json], io, [wrong, cpu, alsoRight, slightlyOff])).toBe(1);
    const text = io.stdout.join("\n");
    expect(text).toMatch(/^wrong .*MISMATCH/m);
    for (const ok of ["cpu", "also-right", "slightly-off"])
      expect(text).not.toMatch(new RegExp(`^${ok} .*MISMATCH`, "m"));
    const rows = JSON.parse(readFileSync(json, "utf8")).rows;
    expect(rows.map((r: { status: string }) => r.status)).toEqual(["mismatch", "ok", "ok", "ok"]);
    expect(rows[2]).toMatchObject({ impl: "also-right", reference: "wrong", disagreesWith: ["wrong"] });
    expect(rows[3].maxAbsDiff).toBeGreaterThan(0.1);
  });

  it("marks both outputs when there are only two and they differ", async () => {
    const json = join(mkdtempSync(join(tmpdir(), "bench-")), "r.json");
    const wrong = fakePeer("wrong", (n) => new Float32Array(n).fill(0.25));
    expect(await main([...quick, "--json", json], capture(), [attngraphImpl("cpu"), wrong])).toBe(1);
    expect(JSON.parse(readFileSync(json, "utf8")).rows.map((r: { status: string }) => r.status)).toEqual([
      "mismatch",
      "mismatch",
    ]);
  });

  it("exits 1 when observing an attngraph run changes its output", async () => {
    const json = join(mkdtempSync(join(tmpdir(), "bench-")), "r.json");
    const cpu = attngraphImpl("cpu");
    const leaky: Impl = {
      name: "leaky",
      family: "attngraph",
      setup: async (p, o) => {
        const r = await cpu.setup(p, o);
        let tapped = false;
        return {
          ...r,
          run: async () => (tapped ? (await r.run()).map((v) => v * 2) : r.run()),
          streams: { events$: () => () => undefined, "tap-all": () => ((tapped = true), () => void (tapped = false)) },
        };
      },
    };
    const io = capture();
    expect(await main([...quick, "--json", json], io, [leaky])).toBe(1);
    const overhead = JSON.parse(readFileSync(json, "utf8")).streamOverhead;
    expect(overhead.map((o: { outputOk: boolean }) => o.outputOk)).toEqual([true, true, false]);
    expect(io.stdout.join("\n")).toContain("observing the run changed its output: leaky at 2,6,8,2 with tap-all");
  });

  it("--interleave sets every implementation up first, then alternates their runs; rows stay in the order asked", async () => {
    const json = join(mkdtempSync(join(tmpdir(), "bench-")), "r.json");
    const log: string[] = [];
    const logged = (name: string): Impl => ({
      name,
      family: "peer",
      async setup(p) {
        log.push(`setup ${name}`);
        const out = new Float32Array("x" in p ? p.x.length : 0).fill(0.5);
        return {
          threads: 1,
          run: async () => (log.push(`run ${name}`), out),
          dispose: async () => void log.push(`dispose ${name}`),
        };
      },
    });
    const broken = fakePeer("broken", () => new Error("no such package"));
    const io = capture();
    expect(await main([...quick, "--interleave", "--json", json], io, [logged("a"), broken, logged("b")])).toBe(0);
    // Both set up before any run; the runs alternate (the first of each round rotating); both disposed at the end.
    expect(log.slice(0, 2)).toEqual(["setup a", "setup b"]);
    expect(log.slice(2, 8)).toEqual(["run a", "run b", "run b", "run a", "run a", "run b"]);
    expect(log.slice(-2)).toEqual(["dispose a", "dispose b"]);
    const r = JSON.parse(readFileSync(json, "utf8"));
    expect(r.meta.interleave).toBe(true);
    expect(r.rows.map((x: { impl: string; status: string; runs: number }) => [x.impl, x.status, x.runs])).toEqual([
      ["a", "ok", 3],
      ["broken", "unavailable", 0],
      ["b", "ok", 3],
    ]);
    expect(io.stdout.join("\n")).toContain("timed in alternating rounds (--interleave)");
  });

  it("--interleave: an implementation whose run fails is a failed row, and the others are timed without it", async () => {
    const json = join(mkdtempSync(join(tmpdir(), "bench-")), "r.json");
    const cpu = attngraphImpl("cpu");
    let calls = 0;
    const flaky: Impl = {
      name: "flaky",
      family: "peer",
      setup: async (p) => ({
        threads: 1,
        run: async () => {
          if (++calls === 2) throw new Error("device lost");
          return new Float32Array("x" in p ? p.x.length : 0);
        },
        dispose: async () => undefined,
      }),
    };
    const io = capture();
    expect(await main([...quick, "--interleave", "--json", json], io, [cpu, flaky])).toBe(0);
    const r = JSON.parse(readFileSync(json, "utf8"));
    expect(r.rows.map((x: { impl: string; status: string }) => [x.impl, x.status])).toEqual([
      ["cpu", "ok"],
      ["flaky", "failed"],
    ]);
    expect(r.rows[1].reason).toContain("device lost");
    expect(r.rows[0].runs).toBe(3);
    expect(r.streamOverhead.map((o: { impl: string }) => o.impl)).toEqual(["cpu", "cpu", "cpu"]);
  });

  it("--problem train-block times training steps: losses checked, the step's planned arena, no stream overhead", async () => {
    const json = join(mkdtempSync(join(tmpdir(), "bench-")), "r.json");
    const io = capture();
    // Named, onnxruntime is a row that says why it does not run (left out by default: see the next test).
    const impls = [attngraphImpl("cpu"), tfjsImpl("cpu"), ortNodeImpl];
    expect(
      await main(
        ["--problem", "train-block", ...quick, "--interleave", "--impl", "cpu,tfjs-cpu,ort-node", "--json", json],
        io,
        impls,
      ),
    ).toBe(0);
    const text = io.stdout.join("\n");
    expect(text).toContain("attngraph bench: one training step of the pre-norm transformer block");
    expect(text).toContain("GFLOP/s from the causal FLOP count 3 · (24·b·T·d² + 2·b·T²·d)");
    expect(text).toContain("shape b=2 T=6 d=8 heads=2 (58.8 kFLOP per step)"); // 3 · 19584
    expect(text).toMatch(
      /impl\s+threads\s+runs\s+median ms\s+GFLOP\/s\s+losses, steps 1 and 2\s+max\|Δ\| vs cpu\s+check\s+peak planned\s+t\/tfjs-cpu/,
    );
    expect(text).toMatch(/^ort-node\s+unavailable: no training: onnxruntime-web\/-node run inference only$/m);
    expect(text).toContain("losses of the first two steps compared: cpu, tfjs-cpu;");
    expect(text).not.toContain("event-stream overhead");
    const r = JSON.parse(readFileSync(json, "utf8"));
    expect(r.meta.problem).toBe("train-block");
    expect(r.rows.map((x: { impl: string; status: string; problem: string }) => [x.impl, x.status, x.problem])).toEqual(
      [
        ["cpu", "ok", "train-block"],
        ["tfjs-cpu", "ok", "train-block"],
        ["ort-node", "unavailable", "train-block"],
      ],
    );
    const [cpu, tfjs] = r.rows;
    expect(cpu.losses).toHaveLength(2);
    expect(Math.abs(tfjs.losses[0] - cpu.losses[0])).toBeLessThan(1e-4 * Math.max(1, Math.abs(cpu.losses[0])));
    expect(cpu.plannedPeakBytes).toBeGreaterThan(0);
    expect(r.streamOverhead).toEqual([]);
  }, 60_000);

  it("a training peer whose losses differ is a MISMATCH; a default run leaves out what cannot train and the run-when-named variants; train-copy says --shape is ignored", async () => {
    const json = join(mkdtempSync(join(tmpdir(), "bench-")), "r.json");
    const cpu = attngraphImpl("cpu");
    const offBy = (name: string, step: 0 | 1, by: number): Impl => ({
      name,
      family: "peer",
      setup: async (p, o) => {
        const r = await cpu.setup(p, o);
        return { ...r, checked: async () => (await r.checked!()).map((l, i) => (i === step ? l * by : l)) };
      },
    });
    const io = capture();
    // A second step's loss off by 1 % is caught as surely as the first's (each loss relative to itself).
    const impls = [
      cpu,
      offBy("second-off", 1, 1.01),
      offBy("also-right", 0, 1 + 1e-6),
      ortNodeImpl,
      tfjsImpl("cpu", "stock"),
    ];
    expect(
      await main(
        ["--problem", "train-copy", "--shape", "1,512,768,12", "--runs", "3", "--warmup", "0", "--json", json],
        io,
        impls,
      ),
    ).toBe(1);
    const text = io.stdout.join("\n");
    expect(text).toContain(
      "shape b=32 T=8 d=32 heads=4 (fixed: the worked example's copy task, vocab 10; --shape ignored) (19.8 MFLOP per step)",
    );
    expect(text).toMatch(/^second-off .*MISMATCH/m);
    expect(text).not.toMatch(/^also-right .*MISMATCH/m);
    const r = JSON.parse(readFileSync(json, "utf8"));
    expect(r.meta.shapeIgnored).toBe(true);
    expect(r.rows.map((x: { impl: string }) => x.impl)).toEqual(["cpu", "second-off", "also-right"]); // ort-node and tfjs-cpu-stock left out
  }, 60_000);

  it("--problem decode times one token over the cache: its FLOP count, per token, tfjs named is an unavailable row, left out by default", async () => {
    const json = join(mkdtempSync(join(tmpdir(), "bench-")), "r.json");
    const io = capture();
    const impls = [attngraphImpl("cpu"), tfjsImpl("cpu"), ortNodeImpl];
    expect(
      await main(["--problem", "decode", ...quick, "--impl", "cpu,tfjs-cpu,ort-node", "--json", json], io, impls),
    ).toBe(0);
    const text = io.stdout.join("\n");
    expect(text).toContain("attngraph bench: one decoding step of causal multi-head attention");
    expect(text).toContain("8·b·d² + 4·b·(T + 1)·d");
    expect(text).toContain("shape b=2 T=6 d=8 heads=2 (T cached positions + 1 new token) (1.47 kFLOP per token)"); // 8·2·64 + 4·2·7·8
    expect(text).toMatch(/^tfjs-cpu\s+unavailable: no decode/m);
    expect(text).toContain("outputs compared: cpu, ort-node;");
    expect(text).toContain("event-stream overhead");
    const r = JSON.parse(readFileSync(json, "utf8"));
    expect(r.meta.problem).toBe("decode");
    expect(r.rows.map((x: { impl: string; status: string; flops: number }) => [x.impl, x.status, x.flops])).toEqual([
      ["cpu", "ok", 1472],
      ["tfjs-cpu", "unavailable", 1472],
      ["ort-node", "ok", 1472],
    ]);
    expect(r.rows[2].maxAbsDiff).toBeLessThan(1e-5);
    const byDefault = capture();
    expect(await main(["--problem", "decode", ...quick, "--json", json], byDefault, impls)).toBe(0);
    expect(JSON.parse(readFileSync(json, "utf8")).rows.map((x: { impl: string }) => x.impl)).toEqual([
      "cpu",
      "ort-node",
    ]);
  }, 60_000);

  it("exits 2 on a bad command line or an unknown impl, and 0 with the usage for --help", async () => {
    const io = capture();
    expect(await main(["--shape", "1,2"], io, [])).toBe(2);
    expect(await main(["--impl", "cpu,nope"], io, [attngraphImpl("cpu")])).toBe(2);
    expect(io.stderr.join("\n")).toContain('--impl: unknown "nope"; known: cpu');
    expect(await main(["--help"], io, [])).toBe(0);
    expect(io.stdout.join("\n")).toContain("usage: pnpm bench");
  });
});
