// Compiles assembly/ into every flavour in ONE process through the `assemblyscript/asc` API (loading binaryen once
// instead of once per flavour: ~6 s instead of ~16 s). Run by the package's `build` script before `tsc -b`, so turbo
// builds and caches it (outputs under dist/). Flavours: plain SIMD, and relaxed SIMD (fused multiply-add); the loader
// picks relaxed when `WebAssembly.validate` accepts it.
import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import asc from "assemblyscript/asc";

const root = fileURLToPath(new URL("..", import.meta.url));
const outDir = `${root}dist/wasm`;
mkdirSync(outDir, { recursive: true });

const common = ["assembly/index.ts", "-O3", "--noAssert", "--runtime", "stub", "--importMemory", "--initialMemory", "1", "--enable", "simd"];
const flavours = {
  simd: [],
  relaxed: ["--enable", "relaxed-simd"],
};

for (const [name, extra] of Object.entries(flavours)) {
  const { error, stderr } = await asc.main([...common, ...extra, "--outFile", `${outDir}/attngraph-${name}.wasm`], { stdout: process.stdout, stderr: process.stderr });
  if (error) {
    console.error(`executor-wasm: building the ${name} flavour failed: ${error.message}\n${stderr.toString()}`);
    process.exit(1);
  }
}
