// What stops a run while it waits on user code (an override function's promise): its AbortSignal, or its session's
// dispose(). Kernels see the signal themselves (KernelCall.signal); a promise of the user's cannot, so it is raced.
import { AbortError, SessionDisposedError } from "./errors.js";
import type { Stop } from "./overrides.js";

/** The Stop of run `runId` waiting at `node`: rejects with an AbortError (signal) or SessionDisposedError (dispose). */
export function runStop(runId: number, node: string, signal: AbortSignal | undefined, disposal: AbortSignal): Stop {
  const mine = new WeakSet<object>();
  const reason = (): Error => {
    const e = signal?.aborted
      ? new AbortError(runId, node, signal.reason, "during")
      : new SessionDisposedError(`run ${runId}`, node);
    mine.add(e);
    return e;
  };
  return {
    race<T>(p: Promise<T>): Promise<T> {
      if (signal?.aborted || disposal.aborted) {
        p.catch(() => undefined); // settles later, unobserved: not an unhandled rejection
        return Promise.reject(reason());
      }
      return new Promise<T>((resolve, reject) => {
        const stop = () => {
          cleanup();
          reject(reason());
        };
        const cleanup = () => {
          signal?.removeEventListener("abort", stop);
          disposal.removeEventListener("abort", stop);
        };
        signal?.addEventListener("abort", stop, { once: true });
        disposal.addEventListener("abort", stop, { once: true });
        p.then(
          (v) => {
            cleanup();
            resolve(v);
          },
          (e: unknown) => {
            cleanup();
            reject(e);
          },
        );
      });
    },
    stopped: (e) => typeof e === "object" && e !== null && mine.has(e),
  };
}
