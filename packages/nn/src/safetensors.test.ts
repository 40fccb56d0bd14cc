// The safetensors reader against files it did not write (a PyTorch-layout file made by an independent Python script,
// hand-built F16/BF16/I64 files) and against broken files of every kind, including those the reference reader refuses
// (gaps, trailing bytes, names twice); the writer round-trips and reproduces a golden case through a block. Bad files
// are SafetensorsErrors naming the field, never a crash or a wrong tensor.
import { buildAttention } from "@attngraph/attention";
import { createCpuExecutor } from "@attngraph/executor-cpu";
import { compile } from "@attngraph/runtime";
import { AttnGraphError, Tensor, compare } from "@attngraph/tensor";
import { goldenTrainDir, loadAnyCase, type TrainCase } from "@attngraph/testkit";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { PYTORCH_ATTENTION_WEIGHTS, transformerBlock } from "./block.js";
import { SafetensorsError, bfloat16ToFloat, halfToFloat, readSafetensors } from "./safetensors.js";
import { writeSafetensors } from "./safetensors-write.js";
import { loadStateDict } from "./state-dict.js";

const fixtures = fileURLToPath(new URL("../fixtures/", import.meta.url));
const load = (f: string) => loadAnyCase(`${goldenTrainDir}/${f}`).case as TrainCase;

/** A file from a header object and raw data bytes, as the format lays them out (no padding: readers must not need it). */
function file(header: unknown, data: Uint8Array = new Uint8Array(0), headerLength?: bigint): Uint8Array {
  return rawFile(JSON.stringify(header), data, headerLength);
}

/**
 * A file whose header is `json` exactly as written (JSON.stringify cannot write a key twice); `headerLength` replaces
 * the true size in the first 8 bytes.
 */
function rawFile(json: string, data: Uint8Array = new Uint8Array(0), headerLength?: bigint): Uint8Array {
  const text = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + text.length + data.length);
  new DataView(out.buffer).setBigUint64(0, headerLength ?? BigInt(text.length), true);
  out.set(text, 8);
  out.set(data, 8 + text.length);
  return out;
}

/** A header entry of a float32 tensor of `shape` at bytes [begin, end) of the data. */
const f32 = (shape: number[], begin: number, end: number) => ({ dtype: "F32", shape, data_offsets: [begin, end] });

function error(bytes: Uint8Array): SafetensorsError {
  try {
    readSafetensors(bytes);
  } catch (e) {
    expect(e).toBeInstanceOf(SafetensorsError);
    expect(AttnGraphError.isInstance(e)).toBe(true);
    expect((e as Error).message.length).toBeLessThan(600);
    return e as SafetensorsError;
  }
  throw new Error("readSafetensors accepted a broken file");
}

describe("safetensors", () => {
  it("reads a file laid out by PyTorch's rules (made by fixtures/make_pt_layout.py) into an attention that reproduces the golden case", async () => {
    const c = load("mha-backward-causal-b2-t4-e8-h2.json");
    const { tensors, metadata } = readSafetensors(
      new Uint8Array(readFileSync(`${fixtures}/mha-causal-pt.safetensors`)),
    );
    expect(metadata).toEqual({ format: "pt" });
    expect([...tensors.keys()]).toEqual(["out_proj.weight", "qkv_proj.weight"]);
    const g = buildAttention(
      { dIn: 8, dOut: 8, numHeads: 2, qkvBias: false, outBias: false },
      { fusedQkv: true, weightNames: PYTORCH_ATTENTION_WEIGHTS, userMask: "mask" },
    );
    const s = await compile(g, { executors: [createCpuExecutor()], weights: loadStateDict(g, tensors) });
    const out = await s.run({ x: c.inputs["x"]!, mask: c.inputs["mask"]! });
    expect(compare(out["output"]!, c.expected["output"]!, c.tolerance).ok).toBe(true);
    await s.dispose();
  });

  it("what writeSafetensors writes (the block case's parameters) reads back bit for bit and reproduces the golden block", async () => {
    const c = load("block-causal-b2-t10-e16-h4.json");
    const bytes = writeSafetensors(c.params, { format: "pt" });
    expect(new DataView(bytes.buffer).getBigUint64(0, true) % 8n).toBe(0n); // header padded like the reference writer
    const { tensors } = readSafetensors(bytes);
    for (const [k, t] of Object.entries(c.params)) expect(tensors.get(k)!.toArray()).toEqual(t.toArray());
    const g = transformerBlock(c.config as never, { mask: true });
    const s = await compile(g, { executors: [createCpuExecutor()], weights: loadStateDict(g, tensors) });
    const out = await s.run({ x: c.inputs["x"]!, mask: c.inputs["mask"]! });
    expect(compare(out["output"]!, c.expected["output"]!, c.tolerance).ok).toBe(true);
    await s.dispose();
    const ints = readSafetensors(writeSafetensors({ ids: Tensor.int32([3, -1, 7], [3]) })).tensors.get("ids")!;
    expect([ints.dtype, ...ints.toArray()]).toEqual(["int32", 3, -1, 7]);
  });

  it("converts F16, BF16, F64 and I64 exactly where the value fits", () => {
    const data = new Uint8Array(2 * 3 + 2 * 2 + 8 + 8 * 2);
    const v = new DataView(data.buffer);
    [0x3c00, 0xc000, 0x0001].forEach((h, i) => v.setUint16(i * 2, h, true)); // 1, -2, smallest subnormal
    [0x3f80, 0x4049].forEach((h, i) => v.setUint16(6 + i * 2, h, true)); // 1, 3.140625
    v.setFloat64(10, 0.25, true);
    v.setBigInt64(18, -5n, true);
    v.setBigInt64(26, 2n ** 31n - 1n, true);
    const { tensors } = readSafetensors(
      file(
        {
          h: { dtype: "F16", shape: [3], data_offsets: [0, 6] },
          b: { dtype: "BF16", shape: [2], data_offsets: [6, 10] },
          d: { dtype: "F64", shape: [], data_offsets: [10, 18] },
          i: { dtype: "I64", shape: [2], data_offsets: [18, 34] },
        },
        data,
      ),
    );
    expect(tensors.get("h")!.toArray()).toEqual([1, -2, 2 ** -24]);
    expect(tensors.get("b")!.toArray()).toEqual([1, 3.140625]);
    expect(tensors.get("d")!.toArray()).toEqual([0.25]);
    expect(tensors.get("i")!.dtype).toBe("int32");
    expect(tensors.get("i")!.toArray()).toEqual([-5, 2 ** 31 - 1]);
    expect(halfToFloat(0x7c00)).toBe(Infinity);
    expect(halfToFloat(0x7e00)).toBeNaN();
    expect(bfloat16ToFloat(0xff80)).toBe(-Infinity);
  });

  const t4 = f32([2, 2], 0, 16);
  const sixteen = new Uint8Array(16);
  const broken: [string, () => Uint8Array, string, RegExp][] = [
    ["shorter than the header size", () => new Uint8Array(5), "safetensors header size", /file too short/],
    [
      "a header longer than the file",
      () => file({ w: t4 }, sixteen, 10_000n),
      "safetensors header size",
      /header longer than the file/,
    ],
    [
      "a header of 2^64 - 1 bytes",
      () => file({ w: t4 }, sixteen, 2n ** 64n - 1n),
      "safetensors header size",
      /header longer than the file/,
    ],
    [
      "truncated data",
      () => file({ w: t4 }, sixteen).subarray(0, 8 + JSON.stringify({ w: t4 }).length + 10),
      "tensor w.data_offsets",
      /outside the data/,
    ],
    [
      "a header that is not JSON",
      () => {
        const f = file({ w: t4 }, sixteen);
        f[9] = 0x7b;
        f[8] = 0x5b;
        return f;
      },
      "safetensors header",
      /not UTF-8 JSON/,
    ],
    ["a header that is an array", () => file([1, 2], sixteen), "safetensors header", /not a JSON object/],
    [
      "an unsupported dtype",
      () => file({ w: { ...t4, dtype: "F8_E4M3" } }, sixteen),
      "tensor w.dtype",
      /unsupported dtype.*got F8_E4M3/,
    ],
    [
      "a shape with a negative dim",
      () => file({ w: { ...t4, shape: [-2, 2] } }, sixteen),
      "tensor w.shape",
      /invalid shape/,
    ],
    [
      "offsets that do not match the shape",
      () => file({ w: { ...t4, shape: [3, 2] } }, sixteen),
      "tensor w.data_offsets",
      /24 bytes .* got 16 bytes/,
    ],
    [
      "begin after end",
      () => file({ w: { ...t4, data_offsets: [16, 0] } }, sixteen),
      "tensor w.data_offsets",
      /outside the data/,
    ],
    [
      "overlapping tensors",
      () => file({ a: f32([3], 0, 12), b: f32([2], 8, 16) }, sixteen),
      "tensor b.data_offsets",
      /overlaps tensor a/,
    ],
    [
      "metadata that is not strings",
      () => file({ __metadata__: { format: 1 }, w: t4 }, sixteen),
      "__metadata__.format",
      /must be strings/,
    ],
    [
      "an I64 beyond int32",
      () => {
        const d = new Uint8Array(8);
        new DataView(d.buffer).setBigInt64(0, 2n ** 40n, true);
        return file({ i: { dtype: "I64", shape: [1], data_offsets: [0, 8] } }, d);
      },
      "tensor i[0]",
      /outside the int32 range/,
    ],
    [
      "an F64 beyond float32",
      () => {
        const d = new Uint8Array(8);
        new DataView(d.buffer).setFloat64(0, 1e39, true);
        return file({ f: { dtype: "F64", shape: [1], data_offsets: [0, 8] } }, d);
      },
      "tensor f[0]",
      /outside the float32 range/,
    ],
    // The reference reader's rules: data back to back from 0 to the end of the file, each name once.
    [
      "a gap between tensors",
      () => file({ a: f32([1], 0, 4), b: f32([2], 8, 16) }, sixteen),
      "tensor b.data_offsets",
      /gap of 4 bytes no tensor holds after tensor a, expected begin = 4, got \[8, 16\]/,
    ],
    [
      "a gap before the first tensor",
      () => file({ w: f32([3], 4, 16) }, sixteen),
      "tensor w.data_offsets",
      /gap of 4 bytes no tensor holds at the data's start/,
    ],
    [
      "bytes after the last tensor",
      () => file({ w: t4 }, new Uint8Array(20)),
      "safetensors data",
      /4 bytes after the last tensor's data, expected 16 bytes of data .*got 20 bytes/,
    ],
    [
      "data but no tensors",
      () => file({ __metadata__: { format: "pt" } }, sixteen),
      "safetensors data",
      /16 bytes after the last tensor's data/,
    ],
    [
      "a tensor named twice",
      () =>
        rawFile(
          `{"w":${JSON.stringify({ ...t4, data_offsets: [0, 16] })},"w":${JSON.stringify({ ...t4, shape: [2], data_offsets: [16, 24] })}}`,
          new Uint8Array(24),
        ),
      "tensor w",
      /named twice in the header/,
    ],
    [
      "a field named twice in an entry",
      () => rawFile('{"w":{"dtype":"F32","shape":[2,2],"dtype":"I32","data_offsets":[0,16]}}', sixteen),
      "tensor w.dtype",
      /named twice/,
    ],
    [
      "__metadata__ twice",
      () =>
        rawFile(
          '{"__metadata__":{"a":"1"},"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},"__metadata__":{"b":"2"}}',
          sixteen,
        ),
      "__metadata__",
      /named twice/,
    ],
    [
      "a metadata key twice",
      () =>
        rawFile(
          '{"__metadata__":{"format":"pt","format":"np"},"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}}',
          sixteen,
        ),
      "__metadata__.format",
      /named twice.*got a second "format"/,
    ],
  ];
  it("reads what the rules allow: empty tensors anywhere in the data, no tensors at all, an escaped quote in a name", () => {
    const { tensors } = readSafetensors(
      file(
        {
          e: f32([0, 3], 4, 4),
          'a"b': f32([1], 0, 4),
          z: { dtype: "I32", shape: [0], data_offsets: [4, 4] },
          'a"c': f32([], 4, 8),
        },
        new Uint8Array(8),
      ),
    );
    expect([...tensors.keys()].sort()).toEqual(['a"b', 'a"c', "e", "z"]);
    expect(tensors.get("e")!.shape).toEqual([0, 3]);
    expect(readSafetensors(file({})).tensors.size).toBe(0);
  });

  it.each(broken)("%s is a SafetensorsError naming the field", (_, make, subject, message) => {
    const e = error(make());
    expect(e.subject).toBe(subject);
    expect(e.message).toMatch(message);
  });
});

describe("stateDict: the tensors as a plain object", () => {
  it("holds every tensor of the Map under its key, so Object.entries lists them (over the Map it lists nothing)", () => {
    const bytes = writeSafetensors(
      new Map([
        ["b.weight", Tensor.from([1, 2], [2])],
        ["__proto__", Tensor.from([3], [1])],
      ]),
    );
    const { tensors, stateDict } = readSafetensors(bytes);
    expect(Object.entries(tensors)).toEqual([]);
    expect(Object.keys(stateDict).sort()).toEqual(["__proto__", "b.weight"]);
    expect(stateDict["b.weight"]).toBe(tensors.get("b.weight"));
    // biome-ignore lint/suspicious/noProto: a tensor named __proto__ is what this reads back
    expect(Array.from(stateDict["__proto__"]!.toFloat32Array())).toEqual([3]);
  });
});
