export { lower, type LowerOptions } from "./lower.js";
export { explain } from "./explain.js";
export { resolveShapes, InputError } from "./bind.js";
export type { Plan, PlanStep, Placement, Layout } from "./plan.js";
