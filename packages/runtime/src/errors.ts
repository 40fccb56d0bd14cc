import { AttnGraphError } from "@attngraph/tensor";

/** A run stopped because its AbortSignal fired. `name` is "AbortError", as fetch() and DOM APIs use. */
export class AbortError extends AttnGraphError {
  /** `when` says whether the run stopped before `node` started or inside it (a kernel that checks the signal). */
  constructor(runId: number, node?: string, cause?: unknown, when: "before" | "during" = "before") {
    super("aborted", `run ${runId}: aborted${node ? ` ${when} node ${node}` : ""}`, {
      subject: node ?? `run ${runId}`,
      cause,
    });
    this.name = "AbortError";
  }
}

/** A step of a run failed. `subject` names the node; `cause` is what the executor threw. */
export class RunError extends AttnGraphError {
  readonly node: string;
  readonly executor: string;
  constructor(runId: number, node: string, kind: string, executor: string, cause: unknown) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super(
      AttnGraphError.isInstance(cause) ? cause.code : "kernel",
      `run ${runId}: node ${node} (op ${kind} on ${executor}) failed: ${why}`,
      {
        subject: node,
        cause,
      },
    );
    this.name = "RunError";
    this.node = node;
    this.executor = executor;
  }
}

/**
 * With `checkNumerics`, a step produced NaN or ±∞ where none belongs (−∞ is how mask and ALiBi hide scores, so it is
 * allowed there). `subject` names the first node that produced it; the message gives the index and the value.
 */
export class NumericsError extends AttnGraphError {
  readonly node: string;
  readonly index: number;
  readonly value: number;
  constructor(runId: number, node: string, kind: string, index: number, value: number) {
    super("numerics", `run ${runId}: node ${node} (op ${kind}) produced ${value} at element ${index} (checkNumerics)`, {
      subject: node,
      expected: "finite values",
      got: String(value),
    });
    this.name = "NumericsError";
    this.node = node;
    this.index = index;
    this.value = value;
  }
}

/**
 * A run's shapes need more memory than the session allows (`compile(..., { maxArenaBytes })`). Raised while planning,
 * before anything is allocated; `subject` names the node (or the executor's arena) and the message gives the bytes.
 */
export class MemoryLimitError extends AttnGraphError {
  readonly bytes: number;
  readonly limit: number;
  constructor(runId: number, subject: string, what: string, bytes: number, limit: number) {
    super(
      "memory-limit",
      `run ${runId}: ${subject}: ${what} needs ${formatBytes(bytes)} (${bytes} bytes), over the limit of ${formatBytes(limit)} (maxArenaBytes ${limit})`,
      {
        subject,
        expected: `<= ${limit} bytes`,
        got: `${bytes} bytes`,
      },
    );
    this.name = "MemoryLimitError";
    this.bytes = bytes;
    this.limit = limit;
  }
}

function formatBytes(n: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${i === 0 ? n : n.toFixed(1)} ${units[i]}`;
}

/**
 * The session was disposed: `run()` or `tap()` after `dispose()`, or a run that was in flight when `dispose()` came
 * (it stops before its next step; whatever it held is released).
 */
export class SessionDisposedError extends AttnGraphError {
  constructor(what: string, node?: string) {
    super("disposed", `${what}: the session is disposed${node ? ` (stopped before node ${node})` : ""}`, {
      subject: node ?? "session",
      expected: "a live session",
      got: "a disposed one",
    });
    this.name = "SessionDisposedError";
  }
}

/**
 * A tap's node predicate threw. The run that met it rejects with this error before any step runs, the tap is dropped
 * (its Observable completes) and later runs go on without it: one broken subscriber must not poison the session.
 */
export class TapError extends AttnGraphError {
  constructor(tap: string, node: string, cause: unknown) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super("tap", `${tap}: the node predicate threw on node ${node}: ${why}; the tap was dropped`, {
      subject: tap,
      cause,
    });
    this.name = "TapError";
  }
}
