import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

// Cross-origin isolation lets performance.now() tick in microseconds instead of 0.1 ms steps, so the per-node timings
// from session.events$ mean something for small graphs. The page loads nothing from other origins, so it costs nothing.
const isolation = { "Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp" };

// Served from any path (a sub-folder on a static host): relative asset URLs.
export default defineConfig({
  base: "./",
  resolve: {
    // The wasm executor's kernel modules, for `?url` imports (src/executors.ts passes their URLs to the executor).
    // The package's own lookup (`new URL(\`../dist/wasm/attngraph-${flavour}.wasm\`, import.meta.url)`) is bundled by
    // Vite 8 with glob keys "./wasm/…" but looked up as "../dist/wasm/…", so in a Vite build it fetches ".../undefined".
    alias: {
      "@attngraph/executor-wasm/wasm": fileURLToPath(
        new URL("./node_modules/@attngraph/executor-wasm/dist/wasm", import.meta.url),
      ),
    },
  },
  // The Model tab's chunk holds GPT-2's BPE ranks (js-tiktoken's, ~600 kB of data); it is loaded apart from the rest.
  build: { outDir: "dist", target: "es2022", chunkSizeWarningLimit: 1200 },
  server: { host: "127.0.0.1", headers: isolation },
  preview: { host: "127.0.0.1", headers: isolation },
});
