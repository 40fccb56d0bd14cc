// The WebGPU peers (ort-webgpu: onnxruntime-web's WebGPU EP; tfjs-webgpu: tfjs-backend-webgpu), on small shapes,
// against the float64 reference, and how their rows read. Where there is no GPU (CI) they run on SwiftShader, a CPU
// Vulkan driver (VK_ICD_FILENAMES: vitest.config.ts and the npm script set it), so the rows are correctness only.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { describe, expect, it } from "vitest";
import { main } from "../main.js";
import { makeBlockProblem, makeDecodeProblem, makeProblem, type TrainBlockProblem } from "../problem.js";
import type { BenchResults } from "../results.js";
import { maxAbsDiff, referenceAttention, referenceBlock, referenceDecode } from "../test-reference.js";
import { attngraphImpl } from "./attngraph.js";
import { allImpls } from "./index.js";
import { ortWebGpuImpl } from "./ort.js";
import { TFJS_WEBGPU_FORWARD_ONLY, tfjsImpl } from "./tfjs.js";
import { defaultAdapter, describeAdapter, NO_ADAPTER_HINT } from "./webgpu.js";

// This test file's process (vitest's forks pool: one per file) compiles wasm with Liftoff only: onnxruntime-web's
// WebGPU build is a 27 MB wasm module that V8 otherwise also optimises in the background, about a minute of CPU on
// 2 cores (which the test files running beside this one would feel, and which would hold this process open at its
// end). The wasm is the same either way, and the kernels under test run in WGSL on the adapter; the bench itself runs
// with both tiers.
setFlagsFromString("--liftoff-only");

/** What the rows say of the adapter here: SwiftShader when VK_ICD_FILENAMES points at its ICD (CI), else a real GPU. */
const onSwiftShader = /swiftshader/i.test(process.env["VK_ICD_FILENAMES"] ?? "");

const tfjsWebGpu = tfjsImpl("webgpu");

// 2,6,8,2: the bench's smallest shape; 1,32,64,4: matrices of several workgroup tiles, a causal mask of 32 × 32.
// (tfjs-backend-webgpu hands small slices, transposes and concats to its CPU backend only while their inputs are still
// on the host; here they are matMul results, on the GPU, so every kernel of the forward runs in WGSL at both shapes.)
const shapes = [
  { b: 2, t: 6, d: 8, h: 2 },
  { b: 1, t: 32, d: 64, h: 4 },
];

describe.each([ortWebGpuImpl, tfjsWebGpu])("$name", (impl) => {
  it.each(shapes)(
    "matches the float64 reference at b=$b T=$t d=$d h=$h, on a named adapter",
    async (shape) => {
      const p = makeProblem(shape, 3);
      const runner = await impl.setup(p, { threads: 1 });
      try {
        const out = await runner.run();
        expect(out).toHaveLength(shape.b * shape.t * shape.d);
        expect(maxAbsDiff(out, referenceAttention(p))).toBeLessThan(1e-5);
        expect(maxAbsDiff(await runner.run(), out)).toBeLessThan(1e-6); // runs are repeatable
        expect(runner.threads).toBe(1);
        expect(runner.gpu?.name).toMatch(/\S/);
        if (onSwiftShader)
          expect(runner.gpu).toEqual({
            name: "google swiftshader (SwiftShader driver 5.0.0)",
            software: "SwiftShader, software",
          });
      } finally {
        await runner.dispose();
      }
    },
    // A hang guard, not a speed check: the first ort-webgpu session compiles its wasm and every shader on SwiftShader,
    // which took over 60 s with the whole workspace's tests sharing two cores.
    240_000,
  );

  it("computes the transformer block (--problem block) like the float64 reference at b=2 T=6 d=8 h=2", async () => {
    const p = makeBlockProblem(shapes[0]!, 3);
    const runner = await impl.setup(p, { threads: 1 });
    try {
      expect(maxAbsDiff(await runner.run(), referenceBlock(p))).toBeLessThan(1e-5);
    } finally {
      await runner.dispose();
    }
  }, 60_000);

  it("runs only when named, and not the training problems", () => {
    expect(impl.onlyWhenNamed).toBe(true);
    expect(
      allImpls()
        .filter((i) => !i.onlyWhenNamed)
        .map((i) => i.name),
    ).not.toContain(impl.name);
    expect(impl.unsupported?.("attention")).toBeUndefined();
    expect(impl.unsupported?.("block")).toBeUndefined();
    expect(impl.unsupported?.("train-block")).toMatch(/training|forward problems only/);
  });
});

describe("ort-webgpu, --problem decode", () => {
  it("runs the past key/value model like the float64 reference at b=2 T=6 d=8 h=2", async () => {
    const p = makeDecodeProblem(shapes[0]!, 3);
    const runner = await ortWebGpuImpl.setup(p, { threads: 1 });
    try {
      const out = await runner.run();
      expect(out).toHaveLength(2 * 8);
      expect(maxAbsDiff(out, referenceDecode(p))).toBeLessThan(1e-5);
    } finally {
      await runner.dispose();
    }
  }, 60_000);
});

describe("tfjs-webgpu", () => {
  it("says why it has no training rows, and refuses to set one up", async () => {
    expect(tfjsWebGpu.unsupported?.("train-copy")).toBe(TFJS_WEBGPU_FORWARD_ONLY);
    await expect(tfjsWebGpu.setup({ kind: "train-block" } as TrainBlockProblem, { threads: 1 })).rejects.toThrow(
      TFJS_WEBGPU_FORWARD_ONLY,
    );
  });
});

describe("the WebGPU rows in a run", () => {
  it.runIf(onSwiftShader)(
    "on SwiftShader: outputs checked, times left out (correctness only), the adapter named above the tables",
    async () => {
      const json = join(mkdtempSync(join(tmpdir(), "bench-")), "r.json");
      const io = {
        stdout: [] as string[],
        stderr: [] as string[],
        out: (l: string) => void io.stdout.push(l),
        err: (l: string) => void io.stderr.push(l),
      };
      const args = [
        "--impl",
        "cpu,tfjs-webgpu,ort-webgpu",
        "--shape",
        "2,6,8,2",
        "--runs",
        "3",
        "--warmup",
        "0",
        "--json",
        json,
      ];
      expect(await main(args, io, [attngraphImpl("cpu"), tfjsWebGpu, ortWebGpuImpl])).toBe(0);
      const text = io.stdout.join("\n");
      expect(text).toContain(
        "WebGPU adapter: google swiftshader (SwiftShader driver 5.0.0) (SwiftShader, software): tfjs-webgpu, ort-webgpu are correctness only: outputs checked, times left out (not GPU figures)",
      );
      // No ratio column against a software adapter's time, and no time in its row.
      expect(text).toMatch(/impl\s+threads\s+runs\s+median ms\s+GFLOP\/s\s+max\|Δ\| vs cpu\s+check\s+peak planned$/m);
      for (const name of ["tfjs-webgpu", "ort-webgpu"]) {
        expect(text).toMatch(
          new RegExp(
            `^${name} \\(correctness only: SwiftShader, software\\)\\s+1\\s+3\\s+—\\s+—\\s+(?:0|\\S+e-\\d+)\\s+ok\\s+—$`,
            "m",
          ),
        );
      }
      const r = JSON.parse(readFileSync(json, "utf8")) as BenchResults;
      expect(r.rows.map((x) => [x.impl, x.status, x.correctnessOnly, x.adapter])).toEqual([
        ["cpu", "ok", undefined, undefined],
        ["tfjs-webgpu", "ok", "SwiftShader, software", "google swiftshader (SwiftShader driver 5.0.0)"],
        ["ort-webgpu", "ok", "SwiftShader, software", "google swiftshader (SwiftShader driver 5.0.0)"],
      ]);
      expect(r.rows[2]!.maxAbsDiff).toBeLessThan(1e-5);
    },
    60_000,
  );
});

describe("adapters", () => {
  it("names an adapter and tells a software one (SwiftShader, llvmpipe, a fallback adapter) from a GPU", () => {
    expect(
      describeAdapter({
        vendor: "google",
        architecture: "swiftshader",
        device: "swiftshader-device-subzero-",
        description: "SwiftShader driver 5.0.0",
        isFallbackAdapter: true,
      }),
    ).toEqual({
      name: "google swiftshader (SwiftShader driver 5.0.0)",
      software: "SwiftShader, software",
    });
    expect(
      describeAdapter({ vendor: "mesa", architecture: "", description: "llvmpipe (LLVM 15.0.6, 256 bits)" }).software,
    ).toBe("llvmpipe, software");
    expect(describeAdapter({ vendor: "acme", description: "Acme Soft GPU", isFallbackAdapter: true }).software).toBe(
      "fallback adapter, software",
    );
    expect(
      describeAdapter({
        vendor: "nvidia",
        architecture: "hopper",
        description: "NVIDIA H200",
        isFallbackAdapter: false,
      }),
    ).toEqual({ name: "nvidia hopper (NVIDIA H200)" });
    // What Dawn reported for an H200 (NVIDIA's Vulkan driver): the model is in `device`, the architecture empty.
    expect(
      describeAdapter({
        vendor: "nvidia",
        architecture: "",
        device: "nvidia-h200",
        description: "NVIDIA: 580.159.04 580.159.4.0",
        isFallbackAdapter: false,
      }),
    ).toEqual({
      name: "nvidia-h200 (NVIDIA: 580.159.04 580.159.4.0)",
    });
    expect(
      describeAdapter({ description: "google swiftshader (SwiftShader driver 5.0.0) via webgpu (Dawn)" }).software,
    ).toBe("SwiftShader, software"); // the attngraph executor's
    expect(describeAdapter(undefined)).toEqual({ name: "unknown adapter" });
  });

  it("no adapter: setup throws what to install (the bench prints it as the peer's unavailable row)", async () => {
    await expect(defaultAdapter({ requestAdapter: async () => null })).rejects.toThrow(NO_ADAPTER_HINT);
    expect(NO_ADAPTER_HINT.length).toBeLessThanOrEqual(160); // the report cuts a reason there
  });
});
