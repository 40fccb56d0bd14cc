// End to end, the Model tab in Debian's headless Chromium (playwright-core, never a downloaded browser), on the built
// page served from 127.0.0.1. The golden nanoGPT case (n_layer 2, n_head 4, vocab 50, block 16) goes in through the
// file input: the page asks for n_head, then loads it; greedy generation streams the golden case's tokens one by one
// (on cpu and wasm); a clicked token shows n_layer × n_head attention rows that sum to 1; Stop stops. A file dropped on
// the tab is read the same way, an encoder layer is refused in words, a tiny model with GPT-2's vocabulary takes a
// text prompt and streams text, and a broken checkpoint's missing keys are all named. Fails (never skips) when Chromium
// or the build is missing.
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serve, type Served } from "@attngraph/static-server";
import { tinyGptSafetensors } from "./tiny-gpt.js";

const here = dirname(fileURLToPath(import.meta.url));
const app = join(here, "..");
const dist = join(app, "dist");
const CHROMIUM = "/usr/bin/chromium";
const MODELS = join(app, "../../packages/testkit/golden-models");
const MODEL_FILE = join(MODELS, "nanogpt-bias-l2.safetensors");
const SCREENSHOT = join(app, "artifacts/playground-model.png");
const golden = JSON.parse(readFileSync(join(MODELS, "nanogpt-bias-l2.json"), "utf8")) as {
  config: { n_layer: number; n_head: number };
  generate: { prompt: { data: number[] }; max_new_tokens: number; greedy: { data: number[] } };
};

let server: Served;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `${CHROMIUM} is missing: install Debian's chromium (apt-get update && apt-get install -y chromium); this test never downloads a browser`,
    );
  if (!existsSync(join(dist, "index.html")))
    throw new Error(`${dist}/index.html is missing: run \`vite build\` first (the package's test script does)`);
  server = await serve(dist);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--enable-unsafe-webgpu",
    ],
  });
  page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  page.setDefaultTimeout(60_000);
  page.on("pageerror", (e) => pageErrors.push(String(e)));
  page.on("console", (m) => {
    if (m.type() === "error") pageErrors.push(m.text());
  });
  await page.goto(`${server.url}#model`);
  await page.locator("#model-status[data-state='idle']").waitFor();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const status = () => page.locator("#model-status");
const errorsText = () => page.locator("#model-errors").innerText();
const streamed = async () =>
  await page
    .locator("#model-tokens button.token")
    .evaluateAll((bs) => bs.map((b) => Number((b as HTMLElement).dataset.token)));

async function waitState(...states: string[]): Promise<string> {
  await page.waitForFunction((s) => s.includes(document.getElementById("model-status")!.dataset.state!), states);
  return (await status().getAttribute("data-state"))!;
}

/** Generates with the form as it is and returns the token counts seen after each change of the strip. */
async function generateWatching(): Promise<number[]> {
  await page.evaluate(() => {
    const strip = document.getElementById("model-tokens")!;
    const w = window as unknown as { counts: number[]; watcher?: MutationObserver };
    w.watcher?.disconnect();
    w.counts = [];
    w.watcher = new MutationObserver(() => w.counts.push(strip.childElementCount));
    w.watcher.observe(strip, { childList: true });
  });
  await page.click("#model-generate");
  expect(await waitState("done", "error")).toBe("done");
  return page.evaluate(() => (window as unknown as { counts: number[] }).counts);
}

describe("the Model tab", () => {
  it("asks for n_head when the file does not say it, then loads the golden nanoGPT", async () => {
    await page.setInputFiles("#model-file", MODEL_FILE);
    expect(await waitState("error")).toBe("error");
    expect(await errorsText()).toContain("Model file: config.n_head");
    expect(await page.locator("#model-description").getAttribute("data-loaded")).toBe("false");
    await page.fill("#model-heads", String(golden.config.n_head));
    await page.click("#model-load");
    expect(await waitState("loaded", "error")).toBe("loaded");
    const description = await page.locator("#model-description").innerText();
    expect(description).toContain("nanogpt-bias-l2.safetensors: GPT-2 family");
    expect(description).toContain("2 layers, 4 heads, n_embd 32, vocab 50, block 16");
    expect(await page.locator("#model-prompt-hint").innerText()).toContain(
      "token ids separated by spaces, each in [0, 50)",
    );
  });

  it("streams the golden case's greedy tokens one by one, on cpu, wasm and (with an adapter) webgpu", async () => {
    const { prompt, max_new_tokens, greedy } = golden.generate;
    await page.fill("#model-prompt", prompt.data.join(" "));
    await page.fill("#model-max-new", String(max_new_tokens));
    await page.check("#model-greedy");
    // webgpu too where Chromium has an adapter (headless Chromium on SwiftShader has one); its option is disabled where not.
    const option = page.locator('#model-executor option[value="webgpu"]');
    await page.waitForFunction(
      () => !document.querySelector('#model-executor option[value="webgpu"]')!.textContent!.includes("checking"),
    );
    const webgpu = !(await option.evaluate((o) => (o as HTMLOptionElement).disabled));
    for (const executor of webgpu ? ["cpu", "wasm", "webgpu"] : ["cpu", "wasm"]) {
      await page.selectOption("#model-executor", executor);
      expect(await waitState("loaded", "error")).toBe("loaded");
      const counts = await generateWatching();
      expect(await streamed()).toEqual(greedy.data);
      // The prompt at once, then one token per change: the page drew every token as it came.
      const n = prompt.data.length;
      expect(counts.filter((c) => c > n)).toEqual(Array.from({ length: max_new_tokens }, (_, i) => n + i + 1));
      expect(await status().getAttribute("data-count")).toBe(String(max_new_tokens));
      expect(await status().innerText()).toContain(`on ${executor}`);
    }
    expect(await page.locator("#model-tokens button.token.generated").count()).toBe(max_new_tokens);
  });

  it("shows every layer's and head's attention row of a clicked token; each sums to 1", async () => {
    for (const index of [5, 0]) {
      await page.click(`#model-tokens button.token[data-index="${index}"]`);
      await page.waitForFunction((i) => document.getElementById("attention-grid")!.dataset.index === String(i), index);
      expect(await page.locator(`#model-tokens button.token[data-index="${index}"]`).getAttribute("aria-pressed")).toBe(
        "true",
      );
      const rows = await page.locator("#attention-grid canvas.heatmap").evaluateAll((cs) =>
        cs.map((c) => ({
          layer: (c as HTMLElement).dataset.layer,
          head: (c as HTMLElement).dataset.head,
          values: JSON.parse((c as HTMLElement).dataset.values!) as number[],
        })),
      );
      expect(rows.length).toBe(golden.config.n_layer * golden.config.n_head);
      expect(new Set(rows.map((r) => `${r.layer}/${r.head}`)).size).toBe(rows.length);
      for (const r of rows) {
        expect(r.values.length).toBe(index + 1);
        expect(r.values.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 4);
      }
      if (index === 5) {
        mkdirSync(dirname(SCREENSHOT), { recursive: true });
        await page.screenshot({ path: SCREENSHOT, fullPage: true });
      }
      // Each cell is labelled by its key's token.
      expect(await page.locator("#attention-grid figure").first().locator(".key-labels span").allInnerTexts()).toEqual(
        golden.generate.greedy.data.slice(0, index + 1).map(String),
      );
    }
    expect(await page.locator("#attention-note").innerText()).toContain("2 layers × 4 heads");
    const canvas = page.locator('#attention-grid canvas[data-layer="1"][data-head="2"]');
    await canvas.hover({ position: { x: 2, y: 2 } });
    expect(await page.locator("#attention-readout").innerText()).toMatch(
      /^layer 1, head 2: "13" \(0\) attends to "13" \(0\) with 1(\.0+)?$/,
    );
  });

  it("stops a generation: no token comes after Stop", async () => {
    await page.uncheck("#model-greedy");
    await page.fill("#model-max-new", "4000");
    await page.selectOption("#model-executor", "cpu");
    expect(await waitState("loaded", "error")).toBe("loaded");
    await page.click("#model-generate");
    await page.waitForFunction(() => Number(document.getElementById("model-status")!.dataset.count) >= 3);
    await page.click("#model-stop");
    expect(await waitState("stopped")).toBe("stopped");
    const count = await page.locator("#model-tokens button.token").count();
    await page.waitForTimeout(500);
    expect(await page.locator("#model-tokens button.token").count()).toBe(count);
    expect(count).toBeLessThan(4000);
    expect(await page.locator("#model-stop").isDisabled()).toBe(true);
  });

  it("refuses an encoder layer in words, and reads a dropped file", async () => {
    await page.setInputFiles("#model-file", join(MODELS, "torch-encoder-layer-normfirst-gelu.safetensors"));
    expect(await waitState("error")).toBe("error");
    expect(await errorsText()).toContain("the Model tab runs GPT-2-family models");
    const bytes = [...readFileSync(join(MODELS, "gpt2-hf-layout-l1.safetensors"))];
    const drop = await page.evaluateHandle((b) => {
      const dt = new DataTransfer();
      dt.items.add(new File([new Uint8Array(b)], "dropped.safetensors"));
      return dt;
    }, bytes);
    await page.locator("#model").dispatchEvent("drop", { dataTransfer: drop });
    expect(await waitState("error")).toBe("error");
    expect(await errorsText()).toContain("config.n_head");
    expect(await page.locator("#model-description").innerText()).toContain("dropped.safetensors");
    await page.fill("#model-heads", "2");
    await page.click("#model-load");
    expect(await waitState("loaded")).toBe("loaded");
    expect(await page.locator("#model-description").innerText()).toContain("Hugging Face");
  });

  it("takes text with GPT-2's vocabulary and streams text", async () => {
    const buffer = Buffer.from(tinyGptSafetensors({ vocab: 50257, block: 16, embd: 8, layers: 1, seed: 7 }));
    await page.setInputFiles("#model-file", {
      name: "tiny-gpt2-vocab.safetensors",
      mimeType: "application/octet-stream",
      buffer,
    });
    expect(await waitState("error")).toBe("error"); // n_embd 8 is no GPT-2 size: the heads are asked for
    expect(await page.inputValue("#model-heads")).toBe("");
    await page.fill("#model-heads", "2");
    await page.click("#model-load");
    expect(await waitState("loaded")).toBe("loaded");
    expect(await page.locator("#model-prompt-hint").innerText()).toContain("GPT-2's tokenizer");
    await page.fill("#model-prompt", "Hello world");
    await page.fill("#model-max-new", "3");
    await page.check("#model-greedy");
    await generateWatching();
    const labels = await page.locator("#model-tokens button.token").allInnerTexts();
    expect(labels.slice(0, 2)).toEqual(["Hello", "·world"]);
    expect(labels.length).toBe(5);
    expect((await streamed()).slice(0, 2)).toEqual([15496, 995]);
  });

  it("names every missing key of a broken checkpoint", async () => {
    const omit = ["transformer.h.0.mlp.c_fc.bias", "transformer.ln_f.weight"];
    const buffer = Buffer.from(tinyGptSafetensors({ vocab: 20, block: 8, embd: 8, layers: 1, seed: 3, omit }));
    await page.setInputFiles("#model-file", {
      name: "broken.safetensors",
      mimeType: "application/octet-stream",
      buffer,
    });
    expect(await waitState("error")).toBe("error");
    await page.fill("#model-heads", "2");
    await page.click("#model-load");
    await page.waitForFunction(() => !document.getElementById("model-errors")!.innerText.includes("config.n_head"));
    const text = await errorsText();
    expect(text).toContain("Model file:");
    for (const key of omit) expect(text).toContain(key);
    expect(await page.locator("#model-description").getAttribute("data-loaded")).toBe("false");
    expect(pageErrors).toEqual([]);
  });
});
