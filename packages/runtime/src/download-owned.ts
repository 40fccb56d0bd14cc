// Outputs and tapped tensors go to the caller, who owns them: they must share no memory with the executor's values
// (an arena the next step reuses, a weight, an input).
import type { Executor } from "@attngraph/graph";
import type { Tensor } from "@attngraph/tensor";

/**
 * A host copy of `value` that the caller owns. An executor that declares `downloadsCopy` (its download is always a
 * fresh copy) has a dense download handed over as it is; any other download is copied, densely. For a result of a
 * few hundred KiB the second copy was most of a run's time outside its kernels (a fresh buffer is zeroed and
 * page-faulted in), so it is made only where it is needed.
 */
export async function downloadOwned(executor: Executor, value: unknown): Promise<Tensor> {
  const t = await executor.download(value);
  return executor.downloadsCopy === true && t.offset === 0 && t.data.length === t.size && t.isContiguous()
    ? t
    : t.clone();
}
