// Every public package as a user gets it: packed with `pnpm pack`, its tarball checked (manifest, files, licence,
// publint --strict, attw), then all of them installed with plain npm into a scratch project outside the workspace,
// where a Node ESM script runs a golden case on cpu, wasm and webgpu (SwiftShader), the CLI's bin runs the golden
// suite, and a page built by Vite runs the case in headless Chromium on cpu and wasm. Fails, never skips, when
// something it needs (npm, tar, Chromium, the registry) is missing.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { serve, type Served } from "@attngraph/static-server";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attw, publint } from "./lint.js";
import { pack, type Packed } from "./pack.js";
import { scratchProject, type Scratch } from "./scratch.js";
import { publicPackages, repoRoot } from "./workspace.js";

const CHROMIUM = "/usr/bin/chromium";
const consumerFixture = fileURLToPath(new URL("../consumer", import.meta.url));
const publics = publicPackages();
const packed = new Map<string, Packed>();
let dest: string;

beforeAll(() => {
  dest = mkdtempSync(join(tmpdir(), "attngraph-packs-"));
  for (const p of publics) packed.set(p.name, pack(p, dest));
}, 300_000);

afterAll(() => {
  if (dest) rmSync(dest, { recursive: true, force: true });
});

const tarballOf = (name: string): Packed => {
  const p = packed.get(name);
  if (!p) throw new Error(`${name} was not packed`);
  return p;
};

describe("each public package's tarball", () => {
  it("covers the packages a user installs, and no private one", () => {
    const names = publics.map((p) => p.name);
    for (const name of [
      "@attngraph/tensor",
      "@attngraph/graph",
      "@attngraph/runtime",
      "@attngraph/attention",
      "@attngraph/executor-cpu",
      "@attngraph/executor-wasm",
      "@attngraph/executor-webgpu",
      "attngraph",
    ]) {
      expect(names).toContain(name);
    }
    for (const internal of [
      "@attngraph/bench",
      "@attngraph/playground",
      "@attngraph/package-check",
      "@attngraph/tsconfig",
      "@attngraph/vitest-config",
    ])
      expect(names).not.toContain(internal);
  });

  const licence = readFileSync(join(repoRoot, "LICENSE"), "utf8");

  it.each(publics.map((p) => p.name))(
    "%s: built ESM, declarations, README, licence, no tests, resolved versions",
    (name) => {
      const { files, manifest, tarball } = tarballOf(name);
      expect(files).toContain("README.md");
      expect(files).toContain("LICENSE");
      expect(
        readFileSync(join(tarballOf(name).pkg.dir, "LICENSE"), "utf8"),
        `${name}/LICENSE must be the repo's LICENSE`,
      ).toBe(licence);
      expect(manifest["license"]).toBe("MIT");
      expect(manifest["type"]).toBe("module");
      expect(manifest["sideEffects"]).toBe(false);
      // Every export's JavaScript and declarations are in the tarball.
      const exports = manifest["exports"] as Record<string, string | Record<string, string>>;
      for (const [sub, target] of Object.entries(exports)) {
        if (typeof target === "string") continue; // "./package.json", wildcard folders
        for (const cond of ["types", "default"]) {
          const file = target[cond];
          expect(file, `${name} exports["${sub}"].${cond}`).toBeDefined();
          expect(files, `${tarball}: exports["${sub}"].${cond}`).toContain(file!.replace(/^\.\//, ""));
        }
      }
      expect(
        files.filter((f) => /\.test\.|(^|\/)test-|tsbuildinfo|(^|\/)fixtures\//.test(f)),
        "test files in the tarball",
      ).toEqual([]);
      // pnpm pack turned every workspace: range into the version it points to.
      for (const field of ["dependencies", "peerDependencies", "optionalDependencies"]) {
        for (const [dep, range] of Object.entries((manifest[field] ?? {}) as Record<string, string>)) {
          expect(range, `${name} ${field}.${dep}`).not.toMatch(/^workspace:/);
          if (dep.startsWith("@attngraph/") || dep === "attngraph")
            expect(
              publics.map((p) => p.name),
              `${name} depends on the private ${dep}`,
            ).toContain(dep);
        }
      }
    },
  );

  it("ships the wasm executor's binaries", () => {
    const { files } = tarballOf("@attngraph/executor-wasm");
    expect(files).toContain("dist/wasm/attngraph-simd.wasm");
    expect(files).toContain("dist/wasm/attngraph-relaxed.wasm");
  });

  it.each(publics.map((p) => p.name))("%s passes publint --strict", async (name) => {
    const r = await publint(tarballOf(name).tarball);
    expect(r.ok, r.output).toBe(true);
  });

  it.each(publics.map((p) => p.name))("%s passes attw (esm-only profile)", async (name) => {
    const r = await attw(tarballOf(name).tarball);
    expect(r.ok, r.output).toBe(true);
  });
});

describe("a scratch project with every tarball installed by plain npm", () => {
  let scratch: Scratch;

  beforeAll(async () => {
    // Registry packages a user adds beside ours: the Node binding for WebGPU (an optional peer of the webgpu
    // executor) and the bundler for the page.
    scratch = await scratchProject([...packed.values()], { webgpu: "0.6.2", vite: "8.3.8" }, consumerFixture);
  }, 600_000);

  afterAll(() => {
    if (scratch) rmSync(scratch.dir, { recursive: true, force: true });
  });

  it("resolves nothing from the workspace", () => {
    expect(scratch.dir.startsWith(repoRoot)).toBe(false);
    const installed = JSON.parse(
      readFileSync(join(scratch.dir, "node_modules/@attngraph/runtime/package.json"), "utf8"),
    ) as { version: string };
    expect(installed.version).toBe(tarballOf("@attngraph/runtime").manifest["version"]);
  });

  it("runs a Node ESM script on cpu, wasm and webgpu with the golden case's numbers", async () => {
    const out = await scratch.run("node", ["check-node.mjs", "cpu", "wasm", "webgpu"]);
    const results = out
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map(
        (l) =>
          JSON.parse(l) as { executor: string; ranOn: string; checks: { name: string; ok: boolean; size: number }[] },
      );
    expect(results.map((r) => r.executor)).toEqual(["cpu", "wasm", "webgpu"]);
    for (const r of results) {
      expect(r.ranOn).toBe(r.executor);
      expect(r.checks.length, `${r.executor}: tensors compared`).toBeGreaterThanOrEqual(3);
      for (const c of r.checks) expect(c, `${r.executor} ${c.name}`).toMatchObject({ ok: true });
    }
  }, 180_000);

  it("runs the attngraph bin from node_modules/.bin: every golden case passes on wasm", async () => {
    const out = await scratch.run(join(scratch.dir, "node_modules/.bin/attngraph"), [
      "conformance",
      "node_modules/@attngraph/testkit/golden",
      "--executor",
      "wasm",
    ]);
    expect(out).toMatch(/\b(\d+) passed, 0 failed/);
    expect(Number(/\b(\d+) passed/.exec(out)![1])).toBeGreaterThan(10);
  }, 180_000);

  describe("a page built by Vite (production) in headless Chromium", () => {
    let server: Served | undefined;
    afterAll(async () => server?.close());

    it("runs the golden case on cpu and wasm with the case's numbers", async () => {
      if (!existsSync(CHROMIUM))
        throw new Error(
          `${CHROMIUM} is missing: install Debian's chromium (pnpm setup:system); this test never downloads a browser`,
        );
      await scratch.run(join(scratch.dir, "node_modules/.bin/vite"), ["build", "web", "--logLevel", "warn"]);
      const dist = join(scratch.dir, "web/dist");
      const assets = readFileSync(join(dist, "index.html"), "utf8");
      expect(assets).toContain("<script");
      server = await serve(dist);
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
      });
      try {
        const page = await browser.newPage();
        const errors: string[] = [];
        page.on("pageerror", (e) => errors.push(String(e)));
        await page.goto(server.url);
        await page.waitForSelector("#result[data-done]", { timeout: 120_000 });
        const text = (await page.textContent("#result"))!;
        const results = JSON.parse(text) as
          | { error?: string }
          | { executor: string; ranOn: string; checks: { name: string; ok: boolean }[] }[];
        expect("error" in results ? results.error : undefined).toBeUndefined();
        const list = results as { executor: string; ranOn: string; checks: { name: string; ok: boolean }[] }[];
        expect(list.map((r) => r.executor)).toEqual(["cpu", "wasm"]);
        for (const r of list) {
          expect(r.ranOn).toBe(r.executor);
          expect(r.checks.length).toBeGreaterThanOrEqual(3);
          for (const c of r.checks) expect(c, `${r.executor} ${c.name}`).toMatchObject({ ok: true });
        }
        expect(errors).toEqual([]);
      } finally {
        await browser.close();
      }
    }, 300_000);
  });
});
