// The copy task's trainer on the real cpu executor (no browser): the CLI's data and losses, and the taps the heatmaps
// draw.
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { describe, expect, it } from "vitest";
import { copyData, copyTask, COPY } from "./copy-task.js";
import { createCopyTrainer } from "./train-session.js";

describe("copy task", () => {
  it("draws the CLI's data from the seed: sample 0 of seed 3 is 7 0 4 0 7 4 4 1", () => {
    const data = copyData(3);
    expect(data.shape).toEqual([COPY.samples, COPY.seqLen]);
    expect(Array.from(data.toInt32Array().subarray(0, 8))).toEqual([7, 0, 4, 0, 7, 4, 4, 1]);
    expect(Array.from(copyData(5).toInt32Array().subarray(0, 8))).toEqual([6, 7, 2, 6, 0, 5, 7, 4]);
    expect(data.toInt32Array().every((t) => t >= 0 && t < COPY.vocab)).toBe(true);
  });

  it("trains on the first 32 samples, targets = tokens", () => {
    const { batch } = copyTask(3);
    expect(batch.tokens.shape).toEqual([32, 8]);
    expect(batch.targets).toBe(batch.tokens);
    expect(Array.from(batch.tokens.toInt32Array())).toEqual(
      Array.from(
        copyData(3)
          .toInt32Array()
          .subarray(0, 32 * 8),
      ),
    );
  });
});

describe("createCopyTrainer", () => {
  it("steps with the CLI's losses (seed 3, lr 1e-3) and taps sample 0's attention weights every step", async () => {
    const trainer = await createCopyTrainer({ lr: 1e-3, seed: 3 }, [createCpuExecutor()]);
    try {
      const signal = new AbortController().signal;
      const losses: number[] = [];
      const firstRows: number[][] = [];
      for (let s = 0; s < 10; s++) {
        losses.push(await trainer.step(signal));
        const w = trainer.taps.weights!;
        expect(w.shape).toEqual([32, 4, 8, 8]);
        firstRows.push(Array.from(w.toFloat32Array().subarray(8, 16))); // sample 0, head 0, query 1
      }
      // `attngraph train copy --executor cpu` prints step 1: 2.3379, step 10: 1.7361.
      expect(losses[0]).toBeCloseTo(2.3379, 3);
      expect(losses[9]).toBeCloseTo(1.7361, 3);
      for (let s = 1; s < 10; s++) expect(losses[s]).toBeLessThan(losses[s - 1]!);
      // The weights change as the model trains; causal: query 1 sees keys 0 and 1 only, and its row sums to 1.
      expect(firstRows[9]).not.toEqual(firstRows[0]);
      expect(firstRows[9]![0]! + firstRows[9]![1]!).toBeCloseTo(1, 5);
      expect(firstRows[9]!.slice(2).every((v) => v === 0)).toBe(true);
      const masked = trainer.taps.masked!.toFloat32Array();
      expect(masked[1]).toBe(-Infinity); // sample 0, head 0, query 0, key 1
      expect(trainer.explain()).toContain("loss");
    } finally {
      await trainer.dispose();
    }
  });

  it("an aborted step rejects", async () => {
    const trainer = await createCopyTrainer({ lr: 1e-3, seed: 3 }, [createCpuExecutor()]);
    const abort = new AbortController();
    abort.abort();
    await expect(trainer.step(abort.signal)).rejects.toThrow();
    await trainer.dispose();
  });
});
