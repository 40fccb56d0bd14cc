import { describe, expect, it } from "vitest";
import {
  alignTable,
  exitStatus,
  fmtBytes,
  fmtDiff,
  fmtFlops,
  fmtGflops,
  fmtLoss,
  fmtMs,
  fmtRatio,
  formatReport,
  PROBLEM_TITLE,
} from "./report.js";
import type { BenchResults, ResultRow } from "./results.js";

const meta: BenchResults["meta"] = {
  date: "2026-11-22T00:00:00.000Z",
  problem: "attention",
  node: "v20.20.2",
  cpu: "Test CPU",
  cores: 2,
  threads: 1,
  runs: 10,
  warmup: 2,
  interleave: false,
  budgetS: 10,
  minRuns: 3,
  tolerance: 1e-3,
  flops: "causal",
};
const shape = { b: 1, t: 128, d: 768, h: 12, flops: 629_145_600 };
const row = (
  impl: string,
  family: "attngraph" | "peer",
  medianMs: number,
  extra: Partial<ResultRow> = {},
): ResultRow => ({
  impl,
  problem: "attention",
  family,
  ...shape,
  threads: 1,
  medianMs,
  minMs: medianMs,
  runs: 10,
  samplesMs: [],
  warmupRuns: 2,
  budgetLimited: false,
  gflops: shape.flops / (medianMs * 1e6),
  status: "ok",
  reference: "cpu",
  maxAbsDiff: 1e-7,
  relDiff: 2e-7,
  ...extra,
});

function results(rows: ResultRow[]): BenchResults {
  return {
    meta,
    rows,
    streamOverhead: [
      {
        impl: "cpu",
        b: 1,
        t: 128,
        d: 768,
        h: 12,
        threads: 1,
        mode: "none",
        medianMs: 200,
        runs: 10,
        overheadPct: 0,
        maxAbsDiff: 0,
        outputOk: true,
      },
      {
        impl: "cpu",
        b: 1,
        t: 128,
        d: 768,
        h: 12,
        threads: 1,
        mode: "events$",
        medianMs: 202,
        runs: 10,
        overheadPct: 1,
        maxAbsDiff: 0,
        outputOk: true,
      },
      {
        impl: "cpu",
        b: 1,
        t: 128,
        d: 768,
        h: 12,
        threads: 1,
        mode: "tap-all",
        medianMs: 250,
        runs: 10,
        overheadPct: 25,
        maxAbsDiff: 1e-8,
        outputOk: true,
      },
    ],
    checks: [
      {
        b: 1,
        t: 128,
        d: 768,
        h: 12,
        reference: "cpu",
        compared: rows.filter((r) => r.medianMs !== null).map((r) => r.impl),
        worstPair: { a: "cpu", b: "ort-node", maxAbsDiff: 3e-7, relDiff: 5e-7 },
      },
    ],
  };
}

describe("number formats", () => {
  it("formats times, ratios, rates, differences, FLOPs and bytes", () => {
    expect([fmtMs(0.0714), fmtMs(6.876), fmtMs(56.81), fmtMs(387.93), fmtMs(24510.4)]).toEqual([
      "0.071",
      "6.88",
      "56.81",
      "387.9",
      "24510",
    ]);
    expect([fmtRatio(0.0049), fmtRatio(0.42), fmtRatio(12.34), fmtRatio(205.4)]).toEqual([
      "0.0049",
      "0.42",
      "12.3",
      "205",
    ]);
    expect([fmtGflops(91.46), fmtGflops(0.83), fmtGflops(0.0243)]).toEqual(["91.5", "0.83", "0.024"]);
    expect([fmtDiff(0), fmtDiff(3.04e-7), fmtDiff(Infinity)]).toEqual(["0", "3.0e-7", "Infinity"]);
    expect([fmtFlops(7300), fmtFlops(629_145_600), fmtFlops(5.6e9)]).toEqual(["7.30 kFLOP", "629 MFLOP", "5.60 GFLOP"]);
    expect([fmtBytes(undefined), fmtBytes(null), fmtBytes(3 * 2 ** 20)]).toEqual(["n/a", "n/a", "3.0 MiB"]);
  });

  it("aligns columns, left then right, and lets a one-cell row span", () => {
    expect(alignTable([["a", "10"], ["bbb", "2"], ["a long spanning row"]])).toBe(
      "a    10\nbbb   2\na long spanning row",
    );
  });
});

describe("formatReport", () => {
  it("prints ms, GFLOP/s, the check, n/a for planned memory, and the time ratio to each peer", () => {
    const text = formatReport(
      results([
        row("cpu", "attngraph", 200, { maxAbsDiff: 0, relDiff: 0, plannedPeakBytes: null }),
        row("tfjs-wasm", "peer", 40),
        row("ort-node", "peer", 8),
      ]),
    );
    const line = (impl: string) =>
      text
        .split("\n")
        .find((l) => l.startsWith(`${impl} `))!
        .split(/\s+/);
    expect(text).toContain("shape b=1 T=128 d=768 heads=12 (629 MFLOP per forward)");
    expect(text).toMatch(
      /impl\s+threads\s+runs\s+median ms\s+GFLOP\/s\s+max\|Δ\| vs cpu\s+check\s+peak planned\s+t\/tfjs-wasm\s+t\/ort-node/,
    );
    expect(line("cpu")).toEqual(["cpu", "1", "10", "200.0", "3.15", "—", "ref", "n/a", "5.00", "25.0"]);
    expect(line("ort-node")).toEqual(["ort-node", "1", "10", "8.00", "78.6", "1.0e-7", "ok", "—", "0.20", "1.00"]);
    expect(text).toContain("largest difference cpu vs ort-node: max|Δ| 3.0e-7 (relative 5.0e-7)");
    expect(text).toMatch(/cpu\s+1,128,768,12\s+200\.0 \(10\)\s+202\.0 \(10\) \+1\.0%\s+250\.0 \(10\) \+25\.0%/);
    expect(text).not.toMatch(/MISMATCH|\*/);
  });

  it("names the block and its FLOP count in the header for --problem block", () => {
    const text = formatReport({
      ...results([row("cpu", "attngraph", 200, { problem: "block" })]),
      meta: { ...meta, problem: "block" },
    });
    expect(text.split("\n")[0]).toBe(`attngraph bench: ${PROBLEM_TITLE.block}`);
    expect(text).toContain("GFLOP/s from the causal FLOP count 24·b·T·d² + 2·b·T²·d;");
  });

  it("marks the reference row itself when it is the one that disagrees", () => {
    const text = formatReport(
      results([
        row("cpu", "attngraph", 200, { status: "mismatch", maxAbsDiff: 0, relDiff: 0 }),
        row("ort-node", "peer", 8),
      ]),
    );
    expect(text).toMatch(/^cpu .* MISMATCH /m);
  });

  it("shows planned bytes when the plan has them", () => {
    const text = formatReport(results([row("cpu", "attngraph", 200, { plannedPeakBytes: 5 * 2 ** 20 })]));
    expect(text).toMatch(/cpu .* 5\.0 MiB/);
  });

  it("marks mismatches, budget-limited rows and unavailable peers", () => {
    const rs = [
      row("cpu", "attngraph", 200, { runs: 3, budgetLimited: true }),
      row("tfjs-cpu", "peer", 900, {
        status: "mismatch",
        maxAbsDiff: 0.5,
        relDiff: 0.1,
        disagreesWith: ["cpu", "ort-node"],
      }),
      row("ort-web", "peer", 0, {
        medianMs: null,
        gflops: null,
        runs: 0,
        status: "unavailable",
        reason: "Cannot find package 'onnxruntime-web'",
      }),
    ];
    const text = formatReport(results(rs));
    expect(text).toMatch(/^cpu\s+1\s+3\*/m);
    expect(text).toMatch(/^tfjs-cpu .*MISMATCH/m);
    expect(text).toMatch(/^ort-web\s+unavailable: Cannot find package 'onnxruntime-web'$/m);
    expect(text).toContain("* fewer than 10 timed runs");
    expect(text).toContain(
      "MISMATCH: an output that differs by more than 0.001 relative from more than half of the others",
    );
    expect(text).toContain("  tfjs-cpu at 1,128,768,12: differs from cpu, ort-node");
    expect(text).not.toContain("t/ort-web");
  });
});

describe("WebGPU rows", () => {
  const swiftShader = {
    adapter: "google swiftshader (SwiftShader driver 5.0.0)",
    correctnessOnly: "SwiftShader, software",
  };

  it("on a software adapter: output checked, times left out (no median, rate or ratio, no ratio column), the adapter named", () => {
    const r = results([
      row("cpu", "attngraph", 200, { maxAbsDiff: 0 }),
      row("webgpu", "attngraph", 900, swiftShader),
      row("ort-webgpu", "peer", 700, swiftShader),
      row("ort-node", "peer", 8),
    ]);
    const overhead = [
      ...r.streamOverhead,
      ...r.streamOverhead.map((o) => ({
        ...o,
        impl: "webgpu",
        runs: 4,
        ...(o.mode === "tap-all" ? { outputOk: false } : {}),
        correctnessOnly: "SwiftShader, software",
      })),
    ];
    const text = formatReport({ ...r, streamOverhead: overhead });
    expect(text).toContain(
      "WebGPU adapter: google swiftshader (SwiftShader driver 5.0.0) (SwiftShader, software): webgpu, ort-webgpu are correctness only: outputs checked, times left out (not GPU figures)",
    );
    expect(text).toMatch(/peak planned\s+t\/ort-node$/m); // no t/ort-webgpu
    expect(text).toMatch(
      /^webgpu \(correctness only: SwiftShader, software\)\s+1\s+10\s+—\s+—\s+1\.0e-7\s+ok\s+n\/a\s+—$/m,
    );
    expect(text).toMatch(
      /^ort-webgpu \(correctness only: SwiftShader, software\)\s+1\s+10\s+—\s+—\s+1\.0e-7\s+ok\s+—\s+—$/m,
    );
    expect(text).toMatch(/^cpu\s+1\s+10\s+200\.0\s+3\.15\s+—\s+ref\s+n\/a\s+25\.0$/m);
    expect(text).toMatch(/^webgpu\s+1,128,768,12\s+— \(4\)\s+— \(4\)\s+— \(4\) MISMATCH$/m); // the check stays, the times go
  });

  it("on a real GPU: times reported and the GPU named", () => {
    const gpu = "nvidia hopper (NVIDIA H200)";
    const text = formatReport(
      results([
        row("cpu", "attngraph", 200, { maxAbsDiff: 0 }),
        row("webgpu", "attngraph", 2, { adapter: gpu }),
        row("ort-webgpu", "peer", 1, { adapter: gpu }),
      ]),
    );
    expect(text).toContain("WebGPU adapter: nvidia hopper (NVIDIA H200) (GPU of webgpu, ort-webgpu)");
    expect(text).toMatch(/^webgpu\s+1\s+10\s+2\.00\s+314\.6\s+1\.0e-7\s+ok\s+n\/a\s+2\.00$/m);
    expect(text).not.toContain("correctness only");
  });
});

describe("training problems", () => {
  it("print per step, the losses of steps 1 and 2, what the check compares and the step's planned arena", () => {
    const rows = [
      row("wasm", "attngraph", 600, {
        problem: "train-block",
        losses: [-439.0712, -14636.2],
        plannedPeakBytes: 77.3 * 2 ** 20,
        maxAbsDiff: 0,
      }),
      row("tfjs-wasm", "peer", 1500, { problem: "train-block", losses: [-439.0713, -14636.3] }),
    ];
    const r = results(rows);
    const text = formatReport({ ...r, meta: { ...meta, problem: "train-block" }, streamOverhead: [] });
    expect(text.split("\n")[0]).toBe(`attngraph bench: ${PROBLEM_TITLE["train-block"]}`);
    expect(text).toContain("(629 MFLOP per step)");
    expect(text).toMatch(/GFLOP\/s\s+losses, steps 1 and 2\s+max\|Δ\| vs cpu/);
    expect(text).toMatch(/^wasm\s+1\s+10\s+600\.0\s+1\.05\s+-439\.07, -14636\s+0\s+ok\s+77\.3 MiB\s+0\.40$/m);
    expect(text).toContain("losses of the first two steps compared: wasm, tfjs-wasm;");
    expect(text).toContain("peak planned = the training step's arena (activations kept for the backward included");
    expect([fmtLoss(2.66661334), fmtLoss(-14636.2), fmtLoss(-0.000123456)]).toEqual([
      "2.6666",
      "-14636",
      "-0.00012346",
    ]);
  });

  it("say that train-copy's shape is fixed, and when --shape was ignored", () => {
    const r = results([row("cpu", "attngraph", 60, { problem: "train-copy" })]);
    const copyMeta = { ...meta, problem: "train-copy" as const };
    expect(formatReport({ ...r, meta: copyMeta })).toContain(
      "heads=12 (fixed: the worked example's copy task, vocab 10) (629 MFLOP per step)",
    );
    expect(formatReport({ ...r, meta: { ...copyMeta, shapeIgnored: true } })).toContain(
      "(fixed: the worked example's copy task, vocab 10; --shape ignored)",
    );
  });
});

describe("a run whose output changes when observed", () => {
  it("is marked in the overhead table and fails the exit status", () => {
    const r = results([row("cpu", "attngraph", 200)]);
    const changed = {
      ...r,
      streamOverhead: r.streamOverhead.map((o) =>
        o.mode === "tap-all" ? { ...o, maxAbsDiff: 0.5, outputOk: false } : o,
      ),
    };
    expect(formatReport(changed)).toMatch(/250\.0 \(10\) \+25\.0% MISMATCH/);
    expect(formatReport(changed)).toContain(
      "MISMATCH: observing the run changed its output: cpu at 1,128,768,12 with tap-all (max|Δ| 5.0e-1)",
    );
    expect(exitStatus(r)).toBe(0);
    expect(exitStatus(changed)).toBe(1);
  });
});

describe("exitStatus", () => {
  it("is 1 on a mismatch or a failed attngraph executor, not for an unavailable peer", () => {
    expect(exitStatus(results([row("cpu", "attngraph", 1)]))).toBe(0);
    expect(
      exitStatus(
        results([row("cpu", "attngraph", 1), row("ort-web", "peer", 1, { medianMs: null, status: "unavailable" })]),
      ),
    ).toBe(0);
    expect(exitStatus(results([row("cpu", "attngraph", 1), row("tfjs-cpu", "peer", 1, { status: "mismatch" })]))).toBe(
      1,
    );
    expect(exitStatus(results([row("cpu", "attngraph", 1, { medianMs: null, status: "failed" })]))).toBe(1);
  });
});
