import { describe, expect, it } from "vitest";
import { TrainController, type TrainLoop, type TrainState } from "./train-controller.js";

/** A fake trainer whose steps the test finishes by hand; it records every call and what overlapped. */
class FakeTrainer implements TrainLoop {
  readonly pending: { resolve: (loss: number) => void; reject: (e: unknown) => void; signal: AbortSignal }[] = [];
  steps = 0;
  disposed = false;
  constructor(
    readonly id: number,
    readonly log: string[],
    readonly failAt?: number,
  ) {}
  step(signal: AbortSignal): Promise<number> {
    if (this.disposed) throw new Error("step after dispose");
    this.steps++;
    this.log.push(`trainer ${this.id} step ${this.steps}`);
    if (this.failAt === this.steps) return Promise.reject(new Error("kernel exploded"));
    return new Promise<number>((resolve, reject) => {
      // Like Trainer.step: an abort rejects the step (here at once), which changes no parameter.
      signal.addEventListener("abort", () => reject(signal.reason), { once: true });
      this.pending.push({ resolve, reject, signal });
    });
  }
  async dispose(): Promise<void> {
    this.disposed = true;
    this.log.push(`trainer ${this.id} disposed`);
  }
  /** Finishes the step in flight with this loss. */
  finish(loss: number): void {
    this.pending.shift()!.resolve(loss);
  }
}

const tick = async (n = 3) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setTimeout(r, 0));
};

function harness(options: { failAt?: number; failCreate?: boolean; gate?: Promise<void> } = {}) {
  const log: string[] = [];
  const states: TrainState[] = [];
  const steps: [number, number, number][] = [];
  const errors: string[] = [];
  const trainers: FakeTrainer[] = [];
  const controller = new TrainController<{ lr: number }, FakeTrainer>(
    async (settings) => {
      log.push(`create lr ${settings.lr}`);
      await options.gate;
      if (options.failCreate) throw new Error("webgpu: not available here (no adapter)");
      const t = new FakeTrainer(trainers.length + 1, log, options.failAt);
      trainers.push(t);
      return t;
    },
    {
      onState: (s) => states.push(s),
      onStep: (step, loss, t) => steps.push([t.id, step, loss]),
      onError: (e) => errors.push(e instanceof Error ? e.message : String(e)),
    },
  );
  /** Finishes the current trainer's step in flight, then lets the loop move on. */
  const finish = async (loss: number) => {
    await tick();
    trainers.at(-1)!.finish(loss);
    await tick();
  };
  return { controller, log, states, steps, errors, trainers, finish };
}

describe("TrainController", () => {
  it("runs the given number of steps on one trainer, reports each loss, and disposes it when done", async () => {
    const h = harness();
    await h.controller.start({ lr: 0.1 }, 3);
    for (const loss of [2.3, 1.9, 1.2]) await h.finish(loss);
    await h.controller.settled();
    expect(h.trainers).toHaveLength(1);
    expect(h.steps).toEqual([
      [1, 1, 2.3],
      [1, 2, 1.9],
      [1, 3, 1.2],
    ]);
    expect(h.states).toEqual(["starting", "running", "done"]);
    expect(h.trainers[0]!.disposed).toBe(true);
    expect(h.controller.state).toBe("done");
    expect(h.controller.step).toBe(3);
  });

  it("pauses between steps: the step in flight finishes and counts, and no new step starts until resume", async () => {
    const h = harness();
    await h.controller.start({ lr: 0.1 }, 5);
    await h.finish(2.3);
    await tick();
    expect(h.trainers[0]!.steps).toBe(2); // step 2 is in flight
    expect(h.controller.pause()).toBe(true);
    expect(h.controller.state).toBe("pausing");
    expect(h.controller.pause()).toBe(false); // already pausing
    await h.finish(2.0); // step 2 ends and is reported
    await tick(10);
    expect(h.controller.state).toBe("paused");
    expect(h.controller.step).toBe(2);
    expect(h.trainers[0]!.steps).toBe(2); // no step 3 while paused
    expect(h.trainers[0]!.pending).toHaveLength(0);

    expect(h.controller.resume()).toBe(true);
    expect(h.controller.state).toBe("running");
    await tick();
    // The same trainer goes on: its third step, numbered 3.
    expect(h.trainers).toHaveLength(1);
    expect(h.trainers[0]!.steps).toBe(3);
    for (const loss of [1.7, 1.5, 1.1]) await h.finish(loss);
    await h.controller.settled();
    expect(h.steps.map(([id, step]) => `${id}:${step}`)).toEqual(["1:1", "1:2", "1:3", "1:4", "1:5"]);
    expect(h.states).toEqual(["starting", "running", "pausing", "paused", "running", "done"]);
    expect(h.log.filter((l) => l.startsWith("create"))).toHaveLength(1);
  });

  it("resumes before the step in flight ends without ever parking", async () => {
    const h = harness();
    await h.controller.start({ lr: 0.1 }, 2);
    await tick();
    h.controller.pause();
    expect(h.controller.resume()).toBe(true);
    await h.finish(2.3);
    await h.finish(2.1);
    await h.controller.settled();
    expect(h.states).toEqual(["starting", "running", "pausing", "running", "done"]);
    expect(h.steps).toHaveLength(2);
  });

  it("pause and resume do nothing when nothing runs", () => {
    const h = harness();
    expect(h.controller.pause()).toBe(false);
    expect(h.controller.resume()).toBe(false);
    expect(h.states).toEqual([]);
  });

  it("can pause while the trainer is still being created, and then parks before the first step", async () => {
    let compiled!: () => void;
    const h = harness({ gate: new Promise<void>((r) => (compiled = r)) });
    await h.controller.start({ lr: 0.1 }, 3);
    await tick();
    expect(h.controller.state).toBe("starting");
    expect(h.controller.pause()).toBe(true);
    compiled();
    await tick(10);
    expect(h.controller.state).toBe("paused");
    expect(h.trainers[0]!.steps).toBe(0);
    h.controller.resume();
    await h.finish(2.3);
    expect(h.steps).toEqual([[1, 1, 2.3]]);
    expect(h.states).toEqual(["starting", "pausing", "paused", "running"]);
    await h.controller.stop();
  });

  it("stop aborts the step in flight, does not report it, and disposes the trainer", async () => {
    const h = harness();
    await h.controller.start({ lr: 0.1 }, 10);
    await h.finish(2.3);
    const inFlight = h.trainers[0]!.pending[0]!;
    await h.controller.stop();
    expect(inFlight.signal.aborted).toBe(true);
    expect(h.steps).toHaveLength(1);
    expect(h.trainers[0]!.disposed).toBe(true);
    expect(h.controller.state).toBe("stopped");
    expect(h.errors).toEqual([]);
  });

  it("stop while paused ends the run without another step", async () => {
    const h = harness();
    await h.controller.start({ lr: 0.1 }, 10);
    await tick();
    h.controller.pause();
    await h.finish(2.3);
    expect(h.controller.state).toBe("paused");
    await h.controller.stop();
    expect(h.trainers[0]!.steps).toBe(1);
    expect(h.controller.state).toBe("stopped");
    expect(h.controller.resume()).toBe(false);
  });

  it("start during a run stops it first (its trainer disposed) and begins again with a new trainer from step 1", async () => {
    const h = harness();
    await h.controller.start({ lr: 0.1 }, 10);
    await h.finish(2.3);
    await h.controller.start({ lr: 0.01 }, 2);
    expect(h.log.indexOf("trainer 1 disposed")).toBeLessThan(h.log.indexOf("create lr 0.01"));
    await h.finish(2.4);
    await h.finish(2.2);
    await h.controller.settled();
    expect(h.steps.map(([id, step]) => `${id}:${step}`)).toEqual(["1:1", "2:1", "2:2"]);
    expect(h.states).toEqual(["starting", "running", "stopped", "starting", "running", "done"]);
  });

  it("of several starts in a row only the last one runs", async () => {
    const h = harness();
    await h.controller.start({ lr: 1 }, 10);
    await tick();
    const a = h.controller.start({ lr: 2 }, 10);
    const b = h.controller.start({ lr: 3 }, 1);
    await Promise.all([a, b]);
    await h.finish(1.0);
    await h.controller.settled();
    expect(h.log.filter((l) => l.startsWith("create"))).toEqual(["create lr 1", "create lr 3"]);
    expect(h.controller.state).toBe("done");
  });

  it("a failing step ends the run in error, disposes the trainer, and a new start works", async () => {
    const h = harness({ failAt: 2 });
    await h.controller.start({ lr: 0.1 }, 5);
    await h.finish(2.3);
    await h.controller.settled();
    expect(h.errors).toEqual(["kernel exploded"]);
    expect(h.controller.state).toBe("error");
    expect(h.trainers[0]!.disposed).toBe(true);
    expect(h.steps).toHaveLength(1);
    await h.controller.start({ lr: 0.1 }, 1); // trainer 2 fails only at its step 2
    await h.finish(2.2);
    await h.controller.settled();
    expect(h.controller.state).toBe("done");
    expect(h.steps.at(-1)).toEqual([2, 1, 2.2]);
  });

  it("a trainer that cannot be created is an error in words", async () => {
    const h = harness({ failCreate: true });
    await h.controller.start({ lr: 0.1 }, 5);
    await h.controller.settled();
    expect(h.errors).toEqual(["webgpu: not available here (no adapter)"]);
    expect(h.states).toEqual(["starting", "error"]);
  });

  it("gives the event loop a turn between steps (so the page paints and a Pause click lands), not before the first", async () => {
    const log: string[] = [];
    let t: FakeTrainer | undefined;
    const controller = new TrainController<null, FakeTrainer>(
      async () => (t = new FakeTrainer(1, log)),
      { onStep: (step) => log.push(`shown ${step}`), onError: () => {} },
      async () => {
        log.push("yield");
      },
    );
    await controller.start(null, 3);
    for (let i = 0; i < 3; i++) {
      await tick();
      t!.finish(1);
    }
    await controller.settled();
    expect(log).toEqual([
      "trainer 1 step 1",
      "shown 1",
      "yield",
      "trainer 1 step 2",
      "shown 2",
      "yield",
      "trainer 1 step 3",
      "shown 3",
      "trainer 1 disposed",
    ]);
  });
});
