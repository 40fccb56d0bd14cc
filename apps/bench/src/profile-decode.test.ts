import { describe, expect, it } from "vitest";
import { formatProfile, profileDecode } from "./profile-decode.js";

describe("profileDecode", () => {
  it("times every node of a cpu decoding step, and the step's wall and run-end times around them", async () => {
    const p = await profileDecode("cpu", { b: 2, t: 6, d: 8, h: 2 }, 4, 1);
    const names = p.nodes.map((n) => n.node);
    for (const node of ["queries", "keys", "values", "k.cache", "v.cache", "output"]) expect(names).toContain(node);
    expect(p.nodes.every((n) => n.ms >= 0 && n.executor === "cpu")).toBe(true);
    expect(p.nodes.map((n) => n.ms)).toEqual([...p.nodes.map((n) => n.ms)].sort((a, b) => b - a));
    expect(p.nodes.reduce((a, n) => a + n.ms, 0)).toBeLessThanOrEqual(p.runMs);
    expect(p.runMs).toBeLessThanOrEqual(p.wallMs);
    const lines = formatProfile("cpu", p);
    expect(lines[0]).toMatch(/^cpu 2,6,8,2: step .* ms wall, .* ms run-end, nodes .* ms \(mean of 4 steps\)$/);
    expect(lines).toHaveLength(1 + p.nodes.length);
  });

  it("names the executors it knows when asked for another", async () => {
    await expect(profileDecode("tpu", { b: 1, t: 2, d: 8, h: 2 })).rejects.toThrow(
      /no attngraph executor "tpu"; known: cpu, wasm, webgpu/,
    );
  });
});
