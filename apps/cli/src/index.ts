export { main } from "./main.js";
export type { IO } from "./io.js";
