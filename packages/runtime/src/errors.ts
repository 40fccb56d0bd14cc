import { AttnGraphError } from "@attngraph/tensor";

/** A run stopped because its AbortSignal fired. `name` is "AbortError", as fetch() and DOM APIs use. */
export class AbortError extends AttnGraphError {
  constructor(runId: number, node?: string, cause?: unknown) {
    super("aborted", `run ${runId}: aborted${node ? ` before node ${node}` : ""}`, { subject: node ?? `run ${runId}`, cause });
    this.name = "AbortError";
  }
}

/** A step of a run failed. `subject` names the node; `cause` is what the executor threw. */
export class RunError extends AttnGraphError {
  readonly node: string;
  readonly executor: string;
  constructor(runId: number, node: string, kind: string, executor: string, cause: unknown) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super(AttnGraphError.isInstance(cause) ? cause.code : "kernel", `run ${runId}: node ${node} (op ${kind} on ${executor}) failed: ${why}`, {
      subject: node,
      cause,
    });
    this.name = "RunError";
    this.node = node;
    this.executor = executor;
  }
}
