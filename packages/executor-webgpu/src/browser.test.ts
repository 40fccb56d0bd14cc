// The contract suite and a golden case in real headless Chromium (Debian's /usr/bin/chromium through playwright-core,
// never a downloaded browser) on its WebGPU (SwiftShader on machines without a GPU). The page is bundled here with
// esbuild, with `vitest` aliased to a small shim (src/test-vitest-shim.ts), and served from 127.0.0.1.
import { createServer, type Server } from "node:http";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, type Plugin } from "esbuild";
import { chromium, type Browser } from "playwright-core";
import type { ShimResult } from "./test-vitest-shim.js";

const CHROMIUM = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium";
const here = (p: string): string => fileURLToPath(new URL(p, import.meta.url));

/** node:* modules exist only in Node: each becomes an object whose every export throws when used. */
const nodeStub: Plugin = {
  name: "node-stub",
  setup(b) {
    b.onResolve({ filter: /^node:/ }, (a) => ({ path: a.path, namespace: "node-stub" }));
    b.onLoad({ filter: /.*/, namespace: "node-stub" }, (a) => ({
      contents: `module.exports = new Proxy({}, { get: (_, k) => k === "__esModule" ? false : () => { throw new Error("${a.path} is not available in the browser"); } });`,
      loader: "js",
    }));
  },
};

describe("headless Chromium", () => {
  let server: Server | undefined;
  let browser: Browser | undefined;
  let url = "";

  beforeAll(async () => {
    expect(existsSync(CHROMIUM), `no Chromium at ${CHROMIUM}: apt-get install chromium (see .ci/run)`).toBe(true);
    const bundle = await build({
      entryPoints: [here("./test-browser-page.ts")],
      bundle: true,
      format: "esm",
      platform: "browser",
      target: "es2022",
      write: false,
      conditions: ["@attngraph/source"],
      alias: { vitest: here("./test-vitest-shim.ts") },
      plugins: [nodeStub],
      logLevel: "silent",
    });
    const js = bundle.outputFiles[0]!.text;
    server = createServer((req, res) => {
      if (req.url === "/page.js") {
        res.setHeader("content-type", "text/javascript");
        res.end(js);
      } else {
        res.setHeader("content-type", "text/html");
        res.end('<!doctype html><html><head><script type="module" src="/page.js"></script></head><body></body></html>');
      }
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--enable-unsafe-webgpu", "--enable-features=Vulkan", "--no-sandbox"],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  });

  it("runs the executor contract suite and a golden case on navigator.gpu", async () => {
    const page = await browser!.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(url);
    await page.waitForFunction(
      () => {
        const w = globalThis as unknown as { __results?: unknown; __error?: unknown };
        return w.__results !== undefined || w.__error !== undefined;
      },
      undefined,
      { timeout: 240_000 },
    );
    const { results, error } = await page.evaluate(() => {
      const w = globalThis as unknown as { __results?: ShimResult[]; __error?: string };
      return { results: w.__results, error: w.__error };
    });
    expect(error, "the page failed").toBeUndefined();
    expect(errors, "uncaught errors in the page").toEqual([]);
    const failed = results!.filter((r) => !r.ok).map((r) => `${r.name}: ${r.error}`);
    expect(failed, "failed in the browser").toEqual([]);
    const ran = results!.filter((r) => !r.skipped);
    expect(ran.length, "tests that ran in the browser").toBeGreaterThanOrEqual(60);
    expect(results!.filter((r) => r.skipped).map((r) => r.name)).toHaveLength(1);
  });
});
