// A user's page, bundled by Vite's production build from the packed packages installed with npm: the worked
// multi-head golden case (imported as JSON through @attngraph/testkit's "./golden/*" export) on cpu and wasm. The
// results go into #result as JSON, with data-done set.
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { createWasmExecutor } from "@attngraph/executor-wasm";
import { parseCase } from "@attngraph/testkit/case";
import caseJson from "@attngraph/testkit/golden/seed-002-mha-outproj-eval.json";
import { checkCase } from "../check-case.js";

const out = document.getElementById("result");
try {
  const c = parseCase(caseJson, "seed-002-mha-outproj-eval.json");
  const results = [await checkCase(c, "cpu", createCpuExecutor()), await checkCase(c, "wasm", createWasmExecutor())];
  out.textContent = JSON.stringify(results);
} catch (e) {
  out.textContent = JSON.stringify({ error: String(e?.stack ?? e) });
}
out.dataset.done = "true";
