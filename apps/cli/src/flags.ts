// Which options and arguments a command takes. main() parses every command's options at once (an option may come
// before the command name), so without this check an option of another command parsed fine and then did nothing:
// `export --steps 5` wrote the model and dropped the 5. A flag that does nothing is a usage error (exit 2), never a
// silent no-op.
import { clip } from "@attngraph/tensor";
import { UsageError } from "./io.js";

/** What one command accepts: its options (long names) and the one argument it may take. */
export interface CommandLine {
  readonly flags: readonly string[];
  /** Shown in the message for an extra argument: `<case.json | repro.json>`. */
  readonly operand: string;
}

type Token =
  | { readonly kind: "option"; readonly name: string; readonly rawName: string; readonly value?: string | undefined }
  | { readonly kind: "positional"; readonly value: string }
  | { readonly kind: "option-terminator" };

/**
 * Throws a UsageError for the first option `command` does not take (naming it and listing what the command takes), an
 * option given an empty value, or an argument after its one operand. `tokens` are parseArgs' tokens, the command name among the positionals.
 */
export function checkCommandLine(
  command: string,
  line: CommandLine,
  tokens: readonly Token[],
  shortOf: (flag: string) => string | undefined,
): void {
  const name = (flag: string) => (shortOf(flag) ? `-${shortOf(flag)}/--${flag}` : `--${flag}`);
  for (const t of tokens) {
    if (t.kind !== "option" || t.name === "help") continue;
    if (!line.flags.includes(t.name))
      throw new UsageError(
        `${clip(t.rawName)} is not an option of ${command}; ${command} takes ${line.flags.map(name).join(", ")}`,
      );
    // `--weights ""` (an unset shell variable) read as not given, and `--seed ""` as 0.
    if (t.value !== undefined && t.value.trim() === "")
      throw new UsageError(`${clip(t.rawName)}: expected a value, got "${clip(t.value)}"`);
  }
  const extra = tokens.filter((t) => t.kind === "positional").slice(2);
  if (extra.length)
    throw new UsageError(
      `${command}: unexpected argument "${clip(extra[0]!.value)}": ${command} takes one ${line.operand}`,
    );
}

/**
 * Throws a UsageError naming the first flag in `given` that is set (a string, true, a non-empty list): those flags do
 * nothing `why` ("with a repro: it replays on the two executors it names").
 */
export function refuseFlags(command: string, why: string, given: Readonly<Record<string, unknown>>): void {
  for (const [flag, value] of Object.entries(given)) {
    if (value === undefined || value === false || (Array.isArray(value) && value.length === 0)) continue;
    throw new UsageError(`${command}: ${flag} does nothing ${why}`);
  }
}
