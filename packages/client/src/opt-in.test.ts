/**
 * Pay for what you use: retries, timeouts and logging are imported only through their factories
 * (`retryPolicy`, `timeoutAfter`, `logTo`), so a browser app that calls `createTenantClient` without
 * them ships none of their modules, and one that imports a factory ships that module alone.
 */
import { build } from "esbuild";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * The modules that a minified browser bundle of `contents` keeps code of: this package's (`src/…`) and
 * the shared rules' (`@tenant-integration/internal/…`, from their sources: the package ships them as
 * one module, which a bundler cuts statement by statement).
 */
async function modulesShipped(contents: string): Promise<string[]> {
  const result = await build({
    stdin: { contents, resolveDir: fileURLToPath(new URL(".", import.meta.url)), loader: "ts" },
    alias: { "@tenant-integration/internal": fileURLToPath(new URL("../../internal/src/index.ts", import.meta.url)) },
    bundle: true,
    minify: true,
    platform: "browser",
    format: "esm",
    write: false,
    metafile: true,
    logLevel: "silent",
  });
  const output = Object.values(result.metafile.outputs)[0]!;
  return Object.entries(output.inputs)
    .filter(([, { bytesInOutput }]) => bytesInOutput > 0)
    .map(([path]) => path.replace(/^.*\/internal\/src\//, "@tenant-integration/internal/"))
    .filter((path) => path.startsWith("src/") || path.startsWith("@tenant-integration/internal/"));
}

const OPT_IN = {
  retryPolicy: "src/middleware/retry.ts",
  timeoutAfter: "src/timeout.ts",
  logTo: "src/logger.ts",
} as const;

describe("opt-in features of the client", () => {
  it("ship none of their code in an app that does not import them", async () => {
    const shipped = await modulesShipped(
      `import { createTenantClient, staticToken } from "./index.ts"; export const client = createTenantClient({ baseUrl: "https://acme.tenant.example", auth: staticToken("t") });`,
    );
    expect(shipped).toContain("src/create-tenant-client.ts");
    for (const module of Object.values(OPT_IN)) expect(shipped).not.toContain(module);
    // nor the logging rules shared with the token manager
    expect(shipped).toContain("@tenant-integration/internal/base-url.ts");
    expect(shipped).not.toContain("@tenant-integration/internal/logger.ts");
  });

  it("ship their own module, and only it, once their factory is imported", async () => {
    for (const [factory, module] of Object.entries(OPT_IN)) {
      const shipped = await modulesShipped(`export { createTenantClient, staticToken, ${factory} } from "./index.ts";`);
      expect(shipped, factory).toContain(module);
      for (const other of Object.values(OPT_IN).filter((m) => m !== module))
        expect(shipped, `${factory} brings ${other}`).not.toContain(other);
    }
  });
});
