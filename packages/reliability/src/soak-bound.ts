/**
 * What "flat" means for the soak: at most 4 MiB retained beyond the post-warm-up baseline, after a full GC, however
 * many runs. One run's tapped tensors are about 40 KiB and its arenas about 100 KiB, so a leak of one of either per run
 * passes the bound within 100 runs; a GC-settled heap moves by a few hundred KiB between readings.
 */
export const SOAK_GROWTH_BOUND = 4 * 1024 ** 2;
