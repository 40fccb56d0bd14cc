// Writes assembly/generated/pointwise.ts (the built-in elementwise ops' expressions rendered as AssemblyScript, from
// dist/pointwise-as.js: the package's `build` runs `tsc -b` first), then compiles assembly/ into every flavour in ONE process through the `assemblyscript/asc` API (loading binaryen once
// instead of once per flavour: ~6 s instead of ~16 s). Run by the package's `build` script before `tsc -b`, so turbo
// builds and caches it (outputs under dist/). Flavours: plain SIMD, and relaxed SIMD (fused multiply-add); the loader
// picks relaxed when `WebAssembly.validate` accepts it. Each also comes threaded ("-threads": the same code over an
// imported shared memory, for the worker pool of `createWasmExecutor({ threads })`).
import { mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import asc from "assemblyscript/asc";

const root = fileURLToPath(new URL("..", import.meta.url));
const outDir = `${root}dist/wasm`;
mkdirSync(outDir, { recursive: true });

const { renderBuiltinPointwiseModule } = await import(`${root}dist/pointwise-as.js`);
mkdirSync(`${root}assembly/generated`, { recursive: true });
writeFileSync(`${root}assembly/generated/pointwise.ts`, renderBuiltinPointwiseModule());

const common = [
  "assembly/index.ts",
  "-O3",
  "--noAssert",
  "--runtime",
  "stub",
  "--importMemory",
  "--initialMemory",
  "2",
  "--enable",
  "simd",
];
const shared = ["--sharedMemory", "--maximumMemory", "65536", "--enable", "threads"];
const flavours = {
  simd: [],
  relaxed: ["--enable", "relaxed-simd"],
  "simd-threads": shared,
  "relaxed-threads": ["--enable", "relaxed-simd", ...shared],
};

for (const [name, extra] of Object.entries(flavours)) {
  const { error, stderr } = await asc.main([...common, ...extra, "--outFile", `${outDir}/attngraph-${name}.wasm`], {
    stdout: process.stdout,
    stderr: process.stderr,
  });
  if (error) {
    console.error(`executor-wasm: building the ${name} flavour failed: ${error.message}\n${stderr.toString()}`);
    process.exit(1);
  }
}
