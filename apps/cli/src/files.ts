// Every file the CLI reads, writes or lists goes through here, so a file-system failure (a missing folder, a directory
// where a file was meant, a full disk) is one FileError line naming the path and the reason, exit status 1, never a
// Node stack trace. Each file is read once: `/dev/stdin` or a pipe gives its bytes to the first read only.
import { AttnGraphError, clip, describe } from "@attngraph/tensor";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export type Action = "read" | "write" | "list";

const WHAT: Record<Action, { what: string; expected: string }> = {
  read: { what: "cannot read the file", expected: "a readable file" },
  write: { what: "cannot write the file", expected: "a writable file in an existing folder" },
  list: { what: "cannot list the folder", expected: "a readable folder" },
};

/** A file or folder the CLI could not read, write or list; `errno` is Node's code (ENOENT, EISDIR, ENOSPC, …). */
export class FileError extends AttnGraphError {
  readonly path: string;
  readonly errno: string;

  constructor(path: string, action: Action, errno: string, reason: string, flag?: string, cause?: unknown) {
    const subject = flag === undefined ? path : `${flag} ${path}`;
    const { what, expected } = WHAT[action];
    super("file", describe(subject, what, expected, reason), { subject, expected, got: reason, cause });
    this.name = "FileError";
    this.path = path;
    this.errno = errno;
  }
}

/** The file as UTF-8 text. `flag` is the option that named it (`--weights`), for the message. */
export function readText(path: string, flag?: string): string {
  return attempt(path, "read", flag, () => readFileSync(path, "utf8"));
}

export function readBytes(path: string, flag?: string): Uint8Array {
  return attempt(path, "read", flag, () => new Uint8Array(readFileSync(path)));
}

export function writeFile(path: string, data: string | Uint8Array, flag?: string): void {
  attempt(path, "write", flag, () => writeFileSync(path, data));
}

/** The `*.json` files of a folder, sorted by name, joined onto `dir`. */
export function listJson(dir: string, flag?: string): string[] {
  const names = attempt(dir, "list", flag, () => readdirSync(dir));
  return names
    .filter((n) => n.endsWith(".json"))
    .sort()
    .map((n) => join(dir, n));
}

/** Whether `path` is a folder; anything that cannot be looked at is not one (reading it then says why). */
export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function attempt<T>(path: string, action: Action, flag: string | undefined, io: () => T): T {
  try {
    return io();
  } catch (e) {
    throw toFileError(path, action, e, flag) ?? e;
  }
}

/**
 * `e` as a FileError about `path`, or undefined when it is not a file-system error: Node's system errors (and its
 * ERR_FS_FILE_TOO_LARGE, ERR_STRING_TOO_LONG) carry a string code; anything else is a bug of ours and keeps its stack.
 */
export function toFileError(path: string, action: Action, e: unknown, flag?: string): FileError | undefined {
  const errno = (e as { code?: unknown } | null)?.code;
  return typeof errno === "string" && e instanceof Error
    ? new FileError(path, action, errno, reasonOf(e, errno, action), flag, e)
    : undefined;
}

/** The reason in a few words, without Node's copy of the path (`ENOENT: no such file or directory, open 'x'`). */
function reasonOf(e: Error, errno: string, action: Action): string {
  switch (errno) {
    case "ENOENT":
      return action === "write" ? "its folder does not exist (ENOENT)" : "no such file or folder (ENOENT)";
    case "EISDIR":
      return "it is a folder (EISDIR)";
    case "ENOTDIR":
      return action === "list" ? "it is not a folder (ENOTDIR)" : "a part of the path is not a folder (ENOTDIR)";
    case "ENOSPC":
      return "no space left on the device (ENOSPC)";
    case "EACCES":
    case "EPERM":
      return `permission denied (${errno})`;
    case "EROFS":
      return "read-only file system (EROFS)";
    default: {
      const text = e.message.replace(/^[A-Z0-9_]+: /, "").replace(/, \w+ '.*$/s, "");
      return `${clip(text, 100)} (${clip(errno, 20)})`;
    }
  }
}
