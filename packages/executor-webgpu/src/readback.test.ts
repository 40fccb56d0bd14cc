// Readback only for what is watched: the runtime downloads outputs and tapped nodes, and this executor maps memory
// back only in `download`. Counted, so a stray readback (or a tap that reads nothing) fails here.
import { afterAll, describe, expect, it } from "vitest";
import { createWebGpuExecutor } from "./index.js";
import { attentionSession, randomTensor } from "./test-helpers.js";

describe("readbacks", () => {
  const webgpu = createWebGpuExecutor();
  afterAll(() => webgpu.dispose());

  it("a run with no taps maps back only the output; tapping weights adds exactly that readback", async () => {
    const session = await attentionSession(webgpu);
    const x = randomTensor([2, 5, 8], 1);
    await session.run({ x }); // warm-up: pipelines compiled, weights uploaded
    const before = webgpu.stats.readbacks;
    await session.run({ x });
    expect(webgpu.stats.readbacks - before, "untapped run").toBe(1);

    const seen: string[] = [];
    const sub = session.tap("weights").subscribe((e) => seen.push(`${e.node} ${e.tensor.shape.join("x")}`));
    const tapped = webgpu.stats.readbacks;
    await session.run({ x });
    expect(webgpu.stats.readbacks - tapped, "run with weights tapped").toBe(2);
    expect(seen).toEqual(["weights 2x2x5x5"]);
    sub.unsubscribe();

    const after = webgpu.stats.readbacks;
    await session.run({ x });
    expect(webgpu.stats.readbacks - after, "untapped again").toBe(1);
    await session.dispose();
  });

  it("weights are uploaded once per session and buffers are reused across runs", async () => {
    const session = await attentionSession(webgpu);
    const x = randomTensor([1, 4, 8], 2);
    await session.run({ x });
    const uploads = webgpu.stats.uploads;
    const created = webgpu.bufferCount;
    for (let i = 0; i < 3; i++) await session.run({ x });
    expect(webgpu.stats.uploads - uploads, "only x is uploaded per run").toBe(3);
    expect(webgpu.bufferCount, "no new buffers after the first run").toBe(created);
    await session.dispose();
  });
});
