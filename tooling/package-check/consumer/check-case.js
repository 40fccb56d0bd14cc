// What a user's code does with the installed packages, shared by the Node script and the page: build the attention
// graph of a golden case, compile it for one executor, tap the expected nodes, run, and compare every expected tensor
// with the case's tolerance.
import { attentionWeights, buildAttention } from "@attngraph/attention";
import { compile } from "@attngraph/runtime";
import { compare } from "@attngraph/tensor";

export async function checkCase(c, name, executor) {
  const graph = buildAttention(c.config);
  const session = await compile(graph, { executors: [executor], weights: attentionWeights(c.config, c.weights) });
  const watched = Object.keys(c.expected).filter((n) => n !== "output");
  const tapped = new Map();
  const sub = session.tap(watched).subscribe((e) => tapped.set(e.node, e.tensor));
  const outputs = await session.run(c.inputs);
  sub.unsubscribe();
  const checks = Object.entries(c.expected).map(([n, want]) => {
    const got = n === "output" ? outputs[graph.outputs[0]] : tapped.get(n);
    if (!got) return { name: n, ok: false, size: want.size, failures: want.size, missing: true };
    const r = compare(got, want, c.tolerance);
    return { name: n, ok: r.ok, size: want.size, failures: r.failures };
  });
  await session.dispose();
  await executor.dispose?.();
  return { executor: name, ranOn: executor.name, case: c.name, checks };
}
