/**
 * Regression guards: the browser entry point bundles for platform=browser with no `node:` import, so
 * browser bundles never see Node built-ins (the file store lives behind `/node`); and an app of one
 * session per storage ships none of what only a server's sessions need.
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

/** The modules of this package that bring code to a browser app whose source is `app` (bundled, tree-shaken). */
async function modulesOf(app: string): Promise<string[]> {
  const result = await build({
    stdin: { contents: app, resolveDir: fileURLToPath(new URL(".", import.meta.url)), loader: "js" },
    bundle: true,
    minify: true,
    platform: "browser",
    format: "esm",
    write: false,
    metafile: true,
    logLevel: "silent",
  });
  const [output] = Object.values(result.metafile.outputs);
  return Object.entries(output?.inputs ?? {})
    .filter(([path, { bytesInOutput }]) => bytesInOutput > 0 && path.startsWith("src/"))
    .map(([path]) => path.slice("src/".length));
}

describe("a browser app of one session per storage", () => {
  const options = `{ baseUrl: "https://acme.tenant.test", clientId: "c", redirectUri: "https://app.test/cb", scopes: ["profile:read"] }`;
  /** What only a server's sessions need: the session id rule, the browser binding, the cache of managers. */
  const sessionsOnly = ["session-id.ts", "binding.ts", "sessions.ts", "sign-in-handlers.ts"];

  it("ships none of what only a server's sessions need (createSessions brings it)", async () => {
    const app = await modulesOf(
      `import { createTokenManager, webStorage } from "./index.ts";
       export const tm = createTokenManager({ ...${options}, storage: webStorage(localStorage) });`,
    );
    expect(app).toContain("sign-in.ts");
    expect(app).toContain("pending.ts");
    expect(app.filter((m) => sessionsOnly.includes(m))).toEqual([]);
    const server = await modulesOf(
      `import { createSessions } from "./index.ts"; export const sessions = createSessions(${options});`,
    );
    expect(server).toEqual(expect.arrayContaining(["session-id.ts", "binding.ts", "sessions.ts"]));
  });
});

describe("a browser app whose storage has no lock that processes share", () => {
  const options = `{ baseUrl: "https://acme.tenant.test", clientId: "c", redirectUri: "https://app.test/cb", scopes: ["profile:read"] }`;

  it("ships none of the refresh intents (the storages with such a lock import them, as does an app giving its own lock)", async () => {
    const app = await modulesOf(
      `import { createTokenManager, webStorage } from "./index.ts";
       export const tm = createTokenManager({ ...${options}, storage: webStorage(localStorage) });`,
    );
    expect(app).toContain("refresh.ts");
    expect(app).not.toContain("refresh-intent.ts");
    const ownLock = await modulesOf(
      `import { createTokenManager, refreshIntents } from "./index.ts";
       export const tm = createTokenManager({ ...${options}, lock: (name, task) => task(), refreshIntents });`,
    );
    expect(ownLock).toContain("refresh-intent.ts");
  });
});
