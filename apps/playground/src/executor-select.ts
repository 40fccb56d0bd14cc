// An executor picker for a tab's form: one option per entry, each marked as soon as its entry says whether it can run
// here (an executor that cannot is disabled, with the reason as its tooltip).
import { el } from "./config-form.js";
import type { ExecutorEntry } from "./executor-entry.js";

export function executorSelect(id: string, executors: readonly ExecutorEntry[], value: string): HTMLSelectElement {
  const select = el("select", { id, name: id }) as HTMLSelectElement;
  for (const e of executors) {
    const opt = el("option", { value: e.name }, [`${e.name}: checking…`]) as HTMLOptionElement;
    select.append(opt);
    void e.available().then((ok) => {
      opt.textContent = ok === true ? e.name : `${e.name} (not available here)`;
      opt.disabled = ok !== true;
      opt.title = ok === true ? "" : ok;
    });
  }
  select.value = value;
  return select;
}
