export { grad, type GradOptions, type GradResult } from "./grad.js";
