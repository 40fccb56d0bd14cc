// tfjs's own gradients for the training peers. @tensorflow/tfjs-core registers none by itself: the union package
// @tensorflow/tfjs does, by importing "@tensorflow/tfjs-core/dist/register_all_gradients" (tfjs-core's gradient
// definitions, one `registerGradient` per kernel). The bench has tfjs-core only, and that module lives in tfjs-core's
// ES-module build, whose relative imports carry no file extension (written for bundlers) in a package without
// "type": "module", so Node does not load it as it stands. A module resolve hook, for files under
// @tensorflow/tfjs-core/dist/ only (not its bundles), adds the ".js" and marks them as ES modules; nothing else is
// touched. The gradients go into tfjs's global gradient registry (kept on globalThis so that copies of tfjs-core
// share it, as they share the engine), where the CommonJS build the bench runs finds them: tfjs-core 4.22's own
// gradients, unchanged (the CommonJS build is loaded first, so the engine and its tensors are its own). Loading them
// takes a few seconds, once per process, outside any timing.
import { register } from "node:module";

/** The resolve hook, as a data: URL (it must be a module of its own; a data: URL works from dist and under vitest). */
const HOOKS = `
const DIST = "/@tensorflow/tfjs-core/dist/";
const BUNDLE = /\\/tf-core[^/]*\\.js$/;
export async function resolve(specifier, context, next) {
  const parent = context.parentURL ?? "";
  if (parent.includes(DIST) && !BUNDLE.test(parent) && /^\\.\\.?\\//.test(specifier) && !/\\.[cm]?js$/.test(specifier)) {
    return { ...(await next(specifier + ".js", context)), format: "module" };
  }
  const resolved = await next(specifier, context);
  return resolved.url.includes(DIST) && !BUNDLE.test(resolved.url) ? { ...resolved, format: "module" } : resolved;
}
`;

let registered: Promise<void> | undefined;

/** Registers tfjs-core's gradients (once per process). */
export function registerTfjsGradients(): Promise<void> {
  registered ??= (async () => {
    // The CommonJS build first, so that it makes tfjs's global engine; the gradients' ES modules then find it there.
    await import("@tensorflow/tfjs-core");
    register(`data:text/javascript,${encodeURIComponent(HOOKS)}`);
    await import("@tensorflow/tfjs-core/dist/register_all_gradients.js" as string);
  })();
  return registered;
}
