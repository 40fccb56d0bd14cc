// compile's `updates`: a run's node value becomes a weight's value where it was computed. Checked here on the cpu
// executor wrapped to count uploads and downloads; @attngraph/train runs a training loop through it on every executor.
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { GraphBuilder, type Executor, type OpGraph } from "@attngraph/graph";
import { Tensor, UnsupportedError } from "@attngraph/tensor";
import { describe, expect, it } from "vitest";
import { compile } from "./compile.js";
import type { Session } from "./session.js";

/** W [2, 3] and an input g: y = gelu(W) (the output), W.next = W + g (kept, not an output). */
function stepGraph(): OpGraph {
  const b = new GraphBuilder();
  const w = b.weight("W", [2, 3]);
  const g = b.input("g", [2, 3]);
  b.add("add", "W.next", { a: w, b: g });
  return b.output(b.add("gelu", "y", { x: w })).build();
}

/** The cpu executor, counting what crosses between host and executor. */
function counting(): Executor & { uploads: number; downloads: number } {
  const cpu = createCpuExecutor() as Executor<unknown>;
  const ex: Executor & { uploads: number; downloads: number } = {
    specVersion: 1,
    name: cpu.name,
    uploads: 0,
    downloads: 0,
    supports: (kind, attrs) => cpu.supports(kind, attrs),
    registerKernel: (kind, kernel) => cpu.registerKernel(kind, kernel),
    upload: (t) => (ex.uploads++, cpu.upload(t)),
    download: (v) => (ex.downloads++, cpu.download(v)),
    dispatch: (c) => cpu.dispatch(c),
  };
  return ex;
}

const W0 = Tensor.from([0, 1, 2, 3, 4, 5], [2, 3]);
const G = Tensor.from([0.5, 0.5, 0.5, -1, -1, -1], [2, 3]);

/** stepGraph compiled on `executor` (a plain cpu executor by default), W starting at W0 and updated to W.next. */
function stepSession(executor: Executor = createCpuExecutor()): Promise<Session> {
  return compile(stepGraph(), { executors: [executor], weights: { W: W0 }, updates: { W: "W.next" } });
}

describe("compile({ updates })", () => {
  it("each finished run makes the node's value the weight's, on the executor, with no upload or download of it", async () => {
    const ex = counting();
    const session = await stepSession(ex);
    const ys: number[] = [];
    for (let i = 0; i < 3; i++) ys.push((await session.run({ g: G })).y!.toArray()[0]!);
    // The output saw W at the start of each run: gelu(0), gelu(0.5), gelu(1).
    expect(ys.map((v) => Number(v.toFixed(4)))).toEqual([0, 0.3457, 0.8413]);
    // Uploads: W once (the first run), g once per run. Downloads: y once per run. W never went through the host.
    expect([ex.uploads, ex.downloads]).toEqual([1 + 3, 3]);
    const w = (await session.readWeights()).get("W")!;
    expect(w.toArray()).toEqual([1.5, 2.5, 3.5, 0, 1, 2]);
    await session.dispose();
  });

  it("getWeights() names the weights that live on an executor; readWeights() reads them; setWeights() brings them home", async () => {
    const session = await stepSession();
    expect(session.getWeights().get("W")!.toArray()).toEqual(W0.toArray());
    await session.run({ g: G });
    expect(() => session.getWeights()).toThrow(UnsupportedError);
    expect(() => session.getWeights()).toThrow(
      /unsupported: getWeights\(\) of weights that live on an executor since a run updated them \(W\): use await session\.readWeights\(\)/,
    );
    expect((await session.readWeights()).get("W")!.toArray()).toEqual([0.5, 1.5, 2.5, 2, 3, 4]);
    session.setWeights({ W: W0 });
    expect(session.getWeights().get("W")!.toArray()).toEqual(W0.toArray());
    await session.dispose();
  });

  it("run({ updates }) assigns only the weights named and runs no node only the others need; an unknown name is an error", async () => {
    const b = new GraphBuilder();
    const w = b.weight("W", [2, 3]);
    const v = b.weight("V", [2, 3]);
    const g = b.input("g", [2, 3]);
    b.add("add", "W.next", { a: w, b: g });
    b.add("add", "V.next", { a: v, b: g });
    const graph = b.output(b.add("gelu", "y", { x: w })).build();
    const session = await compile(graph, {
      executors: [createCpuExecutor()],
      weights: { W: W0, V: W0 },
      updates: { W: "W.next", V: "V.next" },
    });
    const ran: string[] = [];
    const sub = session.events$.subscribe((e) => e.type === "node-start" && ran.push(e.node));
    await session.run({ g: G }, { updates: ["V"] });
    expect(ran.sort()).toEqual(["V.next", "y"]);
    ran.length = 0;
    await session.run({ g: G }, { updates: [] });
    expect(ran).toEqual(["y"]);
    sub.unsubscribe();
    const after = await session.readWeights();
    expect(after.get("W")!.toArray()).toEqual(W0.toArray());
    expect(after.get("V")!.toArray()).toEqual([0.5, 1.5, 2.5, 2, 3, 4]);
    await expect(session.run({ g: G }, { updates: ["nope"] })).rejects.toThrow(
      /run options\.updates: not a weight this session updates, expected W, V, got nope/,
    );
    await session.run({ g: G });
    expect((await session.readWeights()).get("W")!.toArray()).toEqual([0.5, 1.5, 2.5, 2, 3, 4]);
    await session.dispose();
  });

  it("a failed run leaves the weights as they were", async () => {
    const b = new GraphBuilder();
    const w = b.weight("W", [3, 2]);
    const ids = b.input("ids", [2], "int32");
    const e = b.add("embedding", "e", { ids, weight: w });
    b.add("add", "W.next", { a: w, b: w });
    const session = await compile(b.output(e).build(), {
      executors: [createCpuExecutor()],
      weights: { W: Tensor.from([1, 2, 3, 4, 5, 6], [3, 2]) },
      updates: { W: "W.next" },
    });
    await expect(session.run({ ids: Tensor.int32([0, 7], [2]) })).rejects.toThrow(/id/);
    expect(session.getWeights().get("W")!.toArray()).toEqual([1, 2, 3, 4, 5, 6]);
    await session.run({ ids: Tensor.int32([0, 1], [2]) });
    expect((await session.readWeights()).get("W")!.toArray()).toEqual([2, 4, 6, 8, 10, 12]);
    await session.dispose();
  });

  it("the kept node is computed though no output reads it, and never planned into the arena", async () => {
    const session = await stepSession();
    expect(session.explain()).toMatch(/kept after the run \(not in an arena\): W\.next/);
    expect(session.plan.steps.map((s) => s.node)).toContain("W.next");
    expect(session.memoryPlan({ g: [2, 3] }).offsets.has("W.next")).toBe(false);
    await session.dispose();
  });

  it("names the field for an unknown weight or node, a shape mismatch, or one node updating two weights", async () => {
    const graph = stepGraph();
    const make = (updates: Record<string, string>) =>
      compile(graph, { executors: [createCpuExecutor()], weights: { W: W0 }, updates });
    await expect(make({ V: "W.next" })).rejects.toThrow(/compile\.updates\.V: no weight of this name/);
    await expect(make({ W: "nope" })).rejects.toThrow(/compile\.updates\.W: no node of this name/);
    const b = new GraphBuilder();
    const w = b.weight("W", [2, 3]);
    const v = b.weight("V", [2, 3]);
    const t = b.add("transpose", "t", { x: w }, { perm: [1, 0] });
    const next = b.add("gelu", "next", { x: w });
    const g2 = b.output(b.add("add", "y", { a: w, b: v }), t, next).build();
    const weights = { W: W0, V: W0 };
    await expect(compile(g2, { executors: [createCpuExecutor()], weights, updates: { W: "t" } })).rejects.toThrow(
      /compile\.updates\.W: the node's shape is not the weight's, expected \[2, 3\], got t \[3, 2\]/,
    );
    await expect(
      compile(g2, { executors: [createCpuExecutor()], weights, updates: { W: "next", V: "next" } }),
    ).rejects.toThrow(/compile\.updates\.V: a node can update one weight only/);
  });

  it("runs that update weights take turns: two at once both count", async () => {
    const session = await stepSession();
    const [a, b] = await Promise.all([session.run({ g: G }), session.run({ g: G })]);
    // The second saw the first's update: gelu(0) then gelu(0.5) at element 0.
    expect([a.y!.toArray()[0], Number(b.y!.toArray()[0]!.toFixed(4))]).toEqual([0, 0.3457]);
    expect((await session.readWeights()).get("W")!.toArray()).toEqual([1, 2, 3, 1, 2, 3]);
    await session.dispose();
  });

  it("dispose() while a run reads its outputs back: the run rejects as disposed, nothing is assigned", async () => {
    const ex = counting();
    const session = await stepSession(ex);
    const download = ex.download;
    ex.download = async (v) => {
      const t = await download(v);
      await session.dispose(); // lands after the last step, before the update is kept
      return t;
    };
    await expect(session.run({ g: G })).rejects.toThrow(/the session is disposed/);
  });
});
