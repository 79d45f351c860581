/**
 * Regression guard: the browser entry point bundles for platform=browser with no `node:` import, so
 * browser bundles never see Node built-ins (the file store lives behind `/node`).
 */
import { build } from "esbuild";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

describe("the browser entry point", () => {
  it("bundles for the browser with no node: import and no runtime dependency but the kit's scope names and shared rules", async () => {
    const result = await build({
      entryPoints: [fileURLToPath(new URL("./index.ts", import.meta.url))],
      bundle: true,
      platform: "browser",
      format: "esm",
      write: false,
      metafile: true,
      logLevel: "silent",
    });
    const code = result.outputFiles[0]?.text ?? "";
    expect(code).not.toMatch(/["']node:/);
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.filter((i) => i.includes("node_modules"))).toEqual([]);
    // Outside this package: only the kit's own contract scope names (the scopes are checked against
    // them) and the rules it shares with the client (@tenant-integration/internal).
    expect(inputs.filter((i) => !i.startsWith("src/")).sort()).toEqual([
      "../internal/dist/index.js",
      "../types/dist/generated/scopes.js",
      "../types/dist/index.js",
    ]);
    expect(inputs.some((i) => i.includes("/node/"))).toBe(false);
  });
});
