// The module's params blocks as the compiler lays them out, for the host's tests (params-blocks.test.ts,
// attention-params.test.ts): a probe module generated from the host's own field lists, one exported constant per
// field (`offsetof<Class>("field")`) and one for the class's size, compiled by asc against assembly/ and read back. A
// field the host names and the module lacks does not compile; one moved, resized, or added on one side only, changes
// the offsets or the size. None of this ships: the kernel module carries no layout code.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import asc from "assemblyscript/asc";

/** A params class's field offsets (in the order asked for) and its size, in bytes. */
export interface BlockLayout {
  readonly offsets: readonly number[];
  readonly bytes: number;
}

/** Class name → the file under assembly/ that declares it, and the host's field names for it, in the host's order. */
export type LayoutQuery = Readonly<Record<string, readonly [file: string, fields: readonly string[]]>>;

const PROBE = "assembly/layout-probe.ts";

/** The compiler's layout of each class of `query`; throws with the compiler's messages when the probe does not compile. */
export async function moduleLayouts(query: LayoutQuery): Promise<Record<string, BlockLayout>> {
  const classes = Object.entries(query);
  const source = [
    ...classes.map(([cls, [file]]) => `import { ${cls} } from "./${file}";`),
    ...classes.flatMap(([cls, [, fields]]) => [
      ...fields.map((f, i) => `export const ${cls}__${i}: i32 = offsetof<${cls}>(${JSON.stringify(f)});`),
      `export const ${cls}__bytes: i32 = offsetof<${cls}>();`,
    ]),
  ].join("\n");
  const root = fileURLToPath(new URL("../..", import.meta.url));
  let binary: Uint8Array<ArrayBuffer> | undefined;
  const stderr = asc.createMemoryStream();
  const { error } = await asc.main([PROBE, "--outFile", "probe.wasm", "--runtime", "stub", "--enable", "simd"], {
    readFile: (name, baseDir) =>
      name === PROBE ? source : readFile(join(root, baseDir, name), "utf8").catch(() => null),
    writeFile: (name, contents) => {
      if (name.endsWith(".wasm") && typeof contents !== "string") binary = new Uint8Array(contents);
    },
    stdout: asc.createMemoryStream(),
    stderr,
  });
  if (error !== null || binary === undefined) throw new Error(`layout probe: ${error?.message}\n${stderr.toString()}`);
  const exports = new WebAssembly.Instance(new WebAssembly.Module(binary), {}).exports;
  const value = (name: string) => (exports[name] as WebAssembly.Global).value as number;
  return Object.fromEntries(
    classes.map(([cls, [, fields]]) => [
      cls,
      { offsets: fields.map((_, i) => value(`${cls}__${i}`)), bytes: value(`${cls}__bytes`) },
    ]),
  );
}
