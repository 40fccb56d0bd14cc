import { AttnGraphError, describe } from "@attngraph/tensor";

/**
 * A golden case file that cannot be used: unreadable, not JSON, or a field that breaks the format of
 * shared/golden/FORMAT.md. The message starts with the file and the JSON path of the field
 * (`bad.json: $.weights.W_query.data: wrong length, expected 64 values for [8, 8], got 63`), so a broken case
 * can be fixed without opening a debugger.
 */
export class CaseFormatError extends AttnGraphError {
  /** The file as the caller named it. */
  readonly file: string;
  /** JSON path of the field (`$.weights.W_query.data[3]`), or undefined when the whole file is at fault. */
  readonly path: string | undefined;

  constructor(file: string, path: string | undefined, what: string, expected?: string, got?: string, cause?: unknown) {
    const subject = path === undefined ? file : `${file}: ${path}`;
    super("case-format", describe(subject, what, expected, got), {
      subject,
      ...(expected === undefined ? {} : { expected }),
      ...(got === undefined ? {} : { got }),
      ...(cause === undefined ? {} : { cause }),
    });
    this.name = "CaseFormatError";
    this.file = file;
    this.path = path;
  }

  /** Recognised by the shared marker and the code, so it survives two copies of this package in one bundle. */
  static override isInstance(value: unknown): value is CaseFormatError {
    return AttnGraphError.isInstance(value) && value.code === "case-format";
  }
}
