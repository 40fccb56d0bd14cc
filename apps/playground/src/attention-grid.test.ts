import { describe, expect, it } from "vitest";
import { rowCellSize } from "./attention-grid.js";

describe("rowCellSize", () => {
  it("keeps a head's row within about 240 px, each cell 3 to 22 px", () => {
    expect(rowCellSize(1)).toBe(22);
    expect(rowCellSize(16)).toBe(15);
    expect(rowCellSize(1024)).toBe(3);
    for (const n of [5, 16, 40, 80]) expect(n * rowCellSize(n)).toBeLessThanOrEqual(240);
  });
});
