export { lower, type LowerOptions } from "./lower.js";
export { explain } from "./explain.js";
export { resolveShapes, resolveBinding, InputError, type Binding } from "./bind.js";
export { planBuffers, type BufferPlan } from "./buffers.js";
export type { Plan, PlanStep, Placement, Layout, PassReport } from "./plan.js";
