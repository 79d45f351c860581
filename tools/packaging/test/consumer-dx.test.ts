// A consumer project that uses the kit the way the issue-14 review did (packed tarballs, npm, its
// own vitest suite under `tsc --strict`), fixture in fixtures/consumer-dx/:
//   (a) `createSandbox().fetch` and `typeof fetch` passed to the client and the token manager, no adapter;
//   (b) `@tenant-integration/sandbox/testing` for refresh, 403 and revoke tests;
//   (c) `createQueryHooks(client)` from openapi-react-query, no cast;
//   (d) a declared `TenantUser` field read as `string` (module augmentation of the client).
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { describe, expect, inject, it } from "vitest";
import { consumerProject, run, typescript } from "./support/consumer.js";

// Pinned like the workspace catalog; all install on Node 20 with engine-strict.
const devDependencies = {
  ...typescript,
  vitest: "4.1.12",
  "openapi-react-query": "0.5.4",
  "@tanstack/react-query": "5.108.0",
  react: "19.3.1",
  "@types/react": "19.3.0",
};

const fixture = [
  "tsconfig.json",
  "src/wiring.ts",
  "src/tenant-user.ts",
  "src/query-hooks.ts",
  "test/integration.test.ts",
];

describe("a consumer project written from the READMEs (consumer-dx)", () => {
  it("compiles under tsc --strict and passes its own vitest suite", () => {
    const dir = consumerProject("consumer-dx", {
      files: Object.fromEntries(fixture.map((file) => [file, `consumer-dx/${file}`])),
      type: "module",
      devDependencies,
    });
    const compiled = run(dir, join(dir, "node_modules", ".bin", "tsc"), ["-p", "."]);
    expect(compiled.output).toBe("");
    expect(compiled.status).toBe(0);
    const tested = run(dir, join(dir, "node_modules", ".bin", "vitest"), ["run", "--reporter=verbose"], 120_000);
    // vitest colours its summary when the environment forces colour (turbo does): read it without.
    expect(stripVTControlCharacters(tested.output)).toMatch(/Tests\s+5 passed \(5\)/);
    expect(tested.status).toBe(0);
  }, 420_000);
});
