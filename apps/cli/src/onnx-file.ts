// An ONNX file as the CLI's run and import take it: the model's bytes, its external data read from beside it (never
// from outside its folder), the shapes of its inputs from --inputs (a JSON object of {shape, data} tensors, or a
// golden-models case whose `inputs` are used) or --dims, imported by importOnnx.
import { dirname, isAbsolute, join, normalize } from "node:path";
import { importOnnx, OnnxImportError, type ImportedOnnx } from "@attngraph/onnx";
import { clip, Tensor, type AnyTensor } from "@attngraph/tensor";
import { readBytes, readText } from "./files.js";
import { UsageError } from "./io.js";
import { parseDims } from "./seeded-values.js";

export interface OnnxFileArgs {
  readonly inputs?: string | undefined;
  readonly dims?: string | undefined;
}

interface RawTensor {
  readonly shape: number[];
  readonly data: number[];
}

export function isOnnxPath(path: string): boolean {
  return /\.onnx$/i.test(path);
}

/** The imported model, and the tensors of --inputs typed as its inputs take them (none without --inputs). */
export function loadOnnxFile(
  path: string,
  args: OnnxFileArgs,
): { imported: ImportedOnnx; inputs: Record<string, AnyTensor> | undefined } {
  const bytes = readBytes(path);
  const raw = args.inputs === undefined ? undefined : readInputs(args.inputs);
  const dims = Object.fromEntries(parseDims(args.dims));
  const shapes = raw && Object.fromEntries(Object.entries(raw).map(([k, t]) => [k, t.shape]));
  const imported = importOnnx(bytes, {
    dims,
    ...(shapes ? { shapes } : {}),
    externalData: (location) => externalFile(path, location),
  });
  if (!raw) return { imported, inputs: undefined };
  const inputs: Record<string, AnyTensor> = {};
  for (const i of imported.inputs) {
    const t = Object.hasOwn(raw, i.name) ? raw[i.name] : undefined;
    if (!t)
      throw new UsageError(
        `--inputs ${clip(args.inputs!)}: no tensor for the model's input ${clip(i.name)} (${i.onnxType} [${i.shape.join(", ")}])`,
      );
    if (i.dtype === "int32") {
      const bad = t.data.findIndex((v) => !Number.isInteger(v) || v < -(2 ** 31) || v >= 2 ** 31);
      if (bad >= 0)
        throw new UsageError(
          `--inputs ${clip(args.inputs!)}: ${clip(i.name)}.data[${bad}]: the input is ${i.onnxType}, expected an integer, got ${t.data[bad]}`,
        );
      inputs[i.name] = Tensor.int32(t.data, t.shape);
    } else inputs[i.name] = Tensor.from(t.data, t.shape);
  }
  return { imported, inputs };
}

/** --inputs: { name: { shape, data } }, or a case whose `inputs` field is that. */
function readInputs(path: string): Record<string, RawTensor> {
  let json: unknown;
  try {
    json = JSON.parse(readText(path, "--inputs"));
  } catch (e) {
    if (e instanceof SyntaxError) throw new UsageError(`--inputs ${clip(path)}: not JSON (${clip(e.message)})`);
    throw e;
  }
  const obj = json as Record<string, unknown>;
  const table =
    obj && typeof obj === "object" && !Array.isArray(obj) && typeof obj["inputs"] === "object" && obj["inputs"] !== null
      ? (obj["inputs"] as Record<string, unknown>)
      : obj;
  if (!table || typeof table !== "object" || Array.isArray(table))
    throw new UsageError(
      `--inputs ${clip(path)}: expected an object of tensors { "name": { "shape": [...], "data": [...] } }`,
    );
  const out: Record<string, RawTensor> = {};
  for (const [name, v] of Object.entries(table)) {
    const t = v as Record<string, unknown>;
    const shape = t?.["shape"];
    const data = t?.["data"];
    const ok =
      Array.isArray(shape) &&
      shape.every((d) => Number.isSafeInteger(d) && d >= 0) &&
      Array.isArray(data) &&
      data.every((x) => typeof x === "number");
    if (!ok)
      throw new UsageError(
        `--inputs ${clip(path)}: ${clip(name)}: expected { "shape": [dims >= 0], "data": [numbers] }`,
      );
    const count = (shape as number[]).reduce((a, d) => a * d, 1);
    if (count !== (data as number[]).length)
      throw new UsageError(
        `--inputs ${clip(path)}: ${clip(name)}: ${(data as number[]).length} values for shape [${(shape as number[]).join(", ")}] (${count})`,
      );
    Object.defineProperty(out, name, { value: { shape, data }, enumerable: true });
  }
  return out;
}

/** An external data file named by the model: only a relative path inside the model's folder is read. */
function externalFile(model: string, location: string): Uint8Array {
  const rel = normalize(location);
  if (isAbsolute(location) || rel.startsWith("..") || rel.includes("\0")) {
    throw new OnnxImportError(
      "external_data.location",
      "an external data file must lie in the model's folder",
      "a relative path without ..",
      location,
    );
  }
  return readBytes(join(dirname(model), rel), "external data");
}
