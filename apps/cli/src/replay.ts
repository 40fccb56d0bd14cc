// `attngraph run <repro.json>`: the node a diff cut out, run again on the two executors the file names, each output
// set against the recorded one and the two against each other. Exit status 1 while the disagreement reproduces (so a
// script can tell a fixed kernel from a broken one), 0 once it is gone.
import { readRepro, replayRepro } from "@attngraph/tools";
import { clip } from "@attngraph/tensor";
import type { JsonDocument } from "./document.js";
import { executorsFor } from "./executors.js";
import type { IO } from "./io.js";
import type { UserOps } from "./user-ops.js";

export async function replay(doc: JsonDocument, ops: UserOps | undefined, io: IO): Promise<number> {
  // Checked before any executor is made: a malformed file is a ReproFormatError naming the field.
  const { repro } = readRepro(doc.json, ops?.registry);
  const executors = executorsFor(`${repro.reference},${repro.executor}`, ops);
  const r = await replayRepro(doc.json, { executors, ...(ops ? { registry: ops.registry } : {}) });
  const c = r.comparison;
  io.out(`replay of ${clip(doc.path)}: node ${r.node} (op ${r.kind}), ${r.executor} against ${r.reference}`);
  for (const [name, same] of Object.entries(r.sameAsRecorded)) {
    io.out(
      `  ${name}: ${same === "error" ? "failed (now or when recorded)" : same ? "same output as recorded" : "output differs from the recorded one"}`,
    );
  }
  const detail =
    c.status === "failed"
      ? `failed: ${c.reason}`
      : `${c.failures} of ${c.size} element(s) out of tolerance, max abs ${c.maxAbs}, max rel ${c.maxRel}${c.worst ? `, worst at ${c.worst.index}: ${c.worst.got} vs ${c.worst.expected}` : ""}`;
  io.out(
    `  ${r.executor} ${c.status === "agree" ? "agrees with" : c.status === "failed" ? "fails where" : "disagrees with"} ${r.reference}: ${detail}`,
  );
  io.out(r.reproduced ? "the disagreement reproduces" : "the disagreement is gone");
  return r.reproduced ? 1 : 0;
}
