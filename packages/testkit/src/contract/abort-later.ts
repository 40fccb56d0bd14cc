// The abort a chunk test sends a long kernel: a signal that fires a moment after the call starts, and when it fired, so
// the test can measure how soon the kernel stopped.

/** A signal that fires `ms` later with Error("user cancelled"); abortedAt() is then its performance.now(). */
export function abortLater(ms = 50): { readonly signal: AbortSignal; abortedAt(): number } {
  const controller = new AbortController();
  let abortedAt = 0;
  setTimeout(() => {
    abortedAt = performance.now();
    controller.abort(new Error("user cancelled"));
  }, ms);
  return { signal: controller.signal, abortedAt: () => abortedAt };
}
