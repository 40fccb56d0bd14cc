// The threaded executor in real headless Chromium (Debian's /usr/bin/chromium through playwright-core, never a
// downloaded browser), as executor-webgpu's browser test: the page (src/test-browser-page.ts) is bundled with esbuild
// and served from 127.0.0.1 with the package's dist/ (the worker and the .wasm files load from there). Served twice:
// cross-origin isolated (two threads) and not (one thread, with the reason); the numbers are the same either way.
// Needs a build first: the workers load dist/threads/worker-*.js.
import { createServer, type Server } from "node:http";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { extname, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, type Plugin } from "esbuild";
import { chromium, type Browser } from "playwright-core";
import type { PageResult, PageThreading } from "./test-browser-page.js";

const CHROMIUM = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium";
const here = (p: string): string => fileURLToPath(new URL(p, import.meta.url));
const DIST = here("../dist");
const TYPES: Record<string, string> = {
  ".js": "text/javascript",
  ".wasm": "application/wasm",
  ".map": "application/json",
};
/** The pool's worker entry, wherever it lives under dist/threads/. */
const WORKER = /^\/dist\/threads\/worker[\w-]*\.js$/;

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

interface Served {
  readonly server: Server;
  readonly url: string;
  /** Paths requested so far (to see which module files and worker the page loaded). */
  readonly requested: string[];
}

/**
 * The page at /, its bundle at /page.js and dist/ under /dist/. The bundle's `import.meta.url` is /page.js, so the
 * package's `new URL("../../dist/threads/….js", …)` and `new URL("../dist/wasm/….wasm", …)` land on /dist/….
 * `isolated`: COOP and COEP on every response (the worker's and the module files' included: COEP require-corp
 * refuses a worker script without it).
 */
async function serve(js: string, isolated: boolean): Promise<Served> {
  const requested: string[] = [];
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    requested.push(path);
    if (isolated) {
      res.setHeader("cross-origin-opener-policy", "same-origin");
      res.setHeader("cross-origin-embedder-policy", "require-corp");
    }
    if (path === "/page.js") {
      res.setHeader("content-type", "text/javascript");
      res.end(js);
    } else if (path.startsWith("/dist/")) {
      const file = resolve(DIST, `.${path.slice("/dist".length)}`);
      const type = TYPES[extname(file)];
      if (relative(DIST, file).startsWith("..") || type === undefined || !existsSync(file)) {
        res.statusCode = 404;
        res.end();
        return;
      }
      res.setHeader("content-type", type);
      res.end(readFileSync(file));
    } else if (path === "/") {
      res.setHeader("content-type", "text/html");
      // An empty icon: else the browser asks for /favicon.ico and logs the 404 as a console error.
      res.end(
        '<!doctype html><html><head><link rel="icon" href="data:,"><script type="module" src="/page.js"></script></head><body></body></html>',
      );
    } else {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const address = server.address();
  return { server, url: `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/`, requested };
}

describe("headless Chromium, threads: 2", () => {
  let browser: Browser | undefined;
  const servers: Served[] = [];
  let isolated: Served;
  let plain: Served;

  beforeAll(async () => {
    expect(existsSync(CHROMIUM), `no Chromium at ${CHROMIUM}: apt-get install chromium (see .ci/run)`).toBe(true);
    const built =
      existsSync(`${DIST}/threads`) && readdirSync(`${DIST}/threads`).some((f) => WORKER.test(`/dist/threads/${f}`));
    expect(built, "no worker entry in dist/threads: build the package first").toBe(true);
    const bundle = await build({
      entryPoints: [here("./test-browser-page.ts")],
      bundle: true,
      format: "esm",
      platform: "browser",
      target: "es2022",
      write: false,
      conditions: ["@attngraph/source"],
      plugins: [nodeStub],
      logLevel: "silent",
    });
    const js = bundle.outputFiles[0]!.text;
    isolated = await serve(js, true);
    plain = await serve(js, false);
    servers.push(isolated, plain);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox"] });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    for (const s of servers) await new Promise((done) => s.server.close(done));
  });

  /** Loads the page; fails on the page's error, uncaught errors, console errors (workers' too) and failed requests. */
  async function load(url: string): Promise<{ results: PageResult[]; threading: PageThreading }> {
    const page = await browser!.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
    // Chromium forwards the workers' console and uncaught errors to the page's listeners too.
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(`console: ${m.text()} (${m.location().url})`);
    });
    page.on("requestfailed", (r) => errors.push(`request failed: ${r.url()} (${r.failure()?.errorText})`));
    page.on("response", (r) => {
      if (r.status() >= 400) errors.push(`${r.status()}: ${r.url()}`);
    });
    try {
      await page.goto(url);
      await page.waitForFunction(
        () => {
          const w = globalThis as unknown as { __results?: unknown; __error?: unknown };
          return w.__results !== undefined || w.__error !== undefined;
        },
        undefined,
        { timeout: 60_000 },
      );
      const { results, threading, error } = await page.evaluate(() => {
        const w = globalThis as unknown as { __results?: PageResult[]; __threading?: PageThreading; __error?: string };
        return { results: w.__results, threading: w.__threading, error: w.__error };
      });
      expect(error, "the page failed").toBeUndefined();
      expect(errors, "errors in the page").toEqual([]);
      const failed = results!.filter((r) => !r.ok).map((r) => `${r.name}: ${r.error}`);
      expect(failed, "failed in the browser").toEqual([]);
      // Two kernel comparisons, the golden case's tapped nodes and output, the fused output and the plan check.
      expect(results!.length).toBeGreaterThanOrEqual(5);
      return { results: results!, threading: threading! };
    } finally {
      await page.close();
    }
  }

  it("runs two threads when cross-origin isolated: the one-thread bits, and the golden case", async () => {
    const { threading } = await load(isolated.url);
    expect(threading.crossOriginIsolated).toBe(true);
    expect(threading.two.threading).toEqual({ requested: 2, threads: 2 });
    expect(threading.two.describe).toMatch(/^(simd|relaxed) flavour, 2 threads$/);
    expect(threading.one.threading).toEqual({ requested: 1, threads: 1 });
    expect(threading.threaded.after).toBeGreaterThan(threading.threaded.before);
    // The worker and the threaded module files came from dist/.
    expect(isolated.requested.some((p) => WORKER.test(p))).toBe(true);
    expect(isolated.requested.some((p) => /^\/dist\/wasm\/attngraph-(simd|relaxed)-threads\.wasm$/.test(p))).toBe(true);
  }, 120_000);

  it("runs one thread, saying why, when the page is not cross-origin isolated: the same bits", async () => {
    const { threading } = await load(plain.url);
    expect(threading.crossOriginIsolated).toBe(false);
    expect(threading.two.threading.requested).toBe(2);
    expect(threading.two.threading.threads).toBe(1);
    expect(threading.two.threading.reason).toContain("cross-origin isolated");
    expect(threading.two.describe).toContain("1 thread (2 asked for: the page is not cross-origin isolated");
    expect(threading.threaded.after).toBe(threading.threaded.before);
    expect(plain.requested.some((p) => WORKER.test(p))).toBe(false);
  }, 120_000);
});
