export { compile, type CompileOptions } from "./compile.js";
export { Session, type RunOptions, type SessionOptions } from "./session.js";
export { compileDecoder, Decoder, DecodeError, CacheOverflowError, type DecoderOptions } from "./decoder.js";
export { AbortError, MemoryLimitError, NumericsError, RunError } from "./errors.js";
export type { SessionEvent, TapEvent } from "./events.js";
export type { RunTap, TapPolicy, TapSelector } from "./taps.js";
export { OverrideError, type Override, type OverrideContext, type OverrideFn } from "./overrides.js";
export { ValidationError, DEFAULT_VALIDATE_TOLERANCE, type Disagreement, type ValidateOptions } from "./validate.js";
