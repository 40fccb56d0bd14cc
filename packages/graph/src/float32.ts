/**
 * The largest finite float32. Kernels take numbers as float32 (WGSL uniforms, f32 in wasm): beyond it a finite number
 * becomes Infinity there, so attributes and expression constants are bounded by it where they are checked.
 */
export const FLOAT32_MAX = 3.4028234663852886e38;
