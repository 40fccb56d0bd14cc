// The executor's errors about its device: disposed, and lost (a lost device fails the run that notices it; the next
// call requests a new one).
import { AttnGraphError, describe } from "@attngraph/tensor";

const EXECUTOR = "webgpu";

export function disposedError(): AttnGraphError {
  return new AttnGraphError(
    "disposed",
    describe(`executor ${EXECUTOR}`, "the executor is disposed", "a live executor", "disposed"),
  );
}

export function deviceLost(
  subject: string,
  info: { reason: string; message: string },
  cause?: unknown,
): AttnGraphError {
  const got = `${info.reason || "unknown"}${info.message ? ` (${firstLine(info.message)})` : ""}`;
  const err = new AttnGraphError(
    "device-lost",
    describe(subject, "the WebGPU device was lost; the next run requests a new one", "a live device", got),
    {
      subject,
      got,
      ...(cause === undefined ? {} : { cause }),
    },
  );
  return err;
}

/** Whether `e` reports a lost WebGPU device (the run failed, the next one re-creates the device). */
export function isDeviceLost(e: unknown): boolean {
  const inner = (e as { cause?: unknown } | null)?.cause;
  return (
    (AttnGraphError.isInstance(e) && e.code === "device-lost") ||
    (inner !== undefined && inner !== e && isDeviceLost(inner))
  );
}

export function firstLine(s: string): string {
  return s.split("\n")[0]!.trim();
}
