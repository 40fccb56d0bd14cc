// The (seed, counter) points on which an executor's own copy of the dropout generator (AssemblyScript, WGSL) is held to
// @attngraph/graph's dropoutBits, bit for bit: the same points for every copy.

/**
 * 64 seeds (0, 1, 42, the int32 edges and 58 spread over uint32) and 1,100 counters: near 0, around 2³¹ (where a
 * signed/unsigned slip shows), below 2³² (the wrap), and 200 spread between.
 */
export function dropoutProbe(): { readonly seeds: readonly number[]; readonly counters: readonly number[] } {
  const counters = [0, 2 ** 31 - 300, 2 ** 32 - 300].flatMap((start) =>
    Array.from({ length: 300 }, (_, k) => start + k),
  );
  for (let k = 0; k < 200; k++) counters.push((k * 0x2545f491) % 2 ** 32);
  const seeds = [
    0,
    1,
    42,
    0x7fffffff,
    0x80000000,
    0xffffffff,
    ...Array.from({ length: 58 }, (_, k) => ((k + 1) * 0x9e3779b1) % 2 ** 32),
  ];
  return { seeds, counters };
}
