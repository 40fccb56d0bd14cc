export { compile, type CompileOptions } from "./compile.js";
export { Session, type RunOptions } from "./session.js";
export { AbortError, RunError } from "./errors.js";
export type { SessionEvent, TapEvent } from "./events.js";
export type { TapSelector } from "./taps.js";
