// A user's Node script, run from the scratch project with the packed packages installed by npm: one golden case of
// @attngraph/testkit (the worked multi-head example with out_proj) on each executor named on the command line.
// Prints one JSON line per executor; exits 1 on a mismatch.
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { createWasmExecutor } from "@attngraph/executor-wasm";
import { createWebGpuExecutor } from "@attngraph/executor-webgpu";
import { goldenDir, loadCase } from "@attngraph/testkit";
import { join } from "node:path";
import { checkCase } from "./check-case.js";

const executors = { cpu: createCpuExecutor, wasm: createWasmExecutor, webgpu: createWebGpuExecutor };
const c = loadCase(join(goldenDir, "seed-002-mha-outproj-eval.json"));
let failed = false;
for (const name of process.argv.slice(2)) {
  const make = executors[name];
  if (!make) throw new Error(`unknown executor ${name}: expected one of ${Object.keys(executors).join(", ")}`);
  const result = await checkCase(c, name, make());
  failed ||= result.checks.some((k) => !k.ok);
  console.log(JSON.stringify(result));
}
process.exit(failed ? 1 : 0);
