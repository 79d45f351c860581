/**
 * Regression guard: every ```ts sample of README.md type-checks against the package's own sources,
 * so a sample that stops compiling (a renamed option, a changed signature) fails `pnpm test`.
 *
 * The samples are compiled in memory as modules of this package, with `@tenant-integration/client`
 * mapped to `src/`, under the package's tsconfig (see tools/readme-samples). The token manager of
 * the quick start resolves to its built types, as in an app. The later samples continue from the
 * quick start and use its `client` without creating one: {@link AMBIENT} declares it.
 */
import { fileURLToPath } from "node:url";
import { readmeSamples, typeCheckSamples } from "@tenant-integration/readme-samples";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));
const samples = readmeSamples(`${root}README.md`);

const paths = { "@tenant-integration/client": ["./src/index.ts"] };

/** What the samples use but leave to the app (the client of the quick start). */
const AMBIENT = `
declare const client: import("@tenant-integration/client").TenantClient;
`;

const typeCheck = (sources: readonly string[]) => typeCheckSamples({ root, samples: sources, paths, ambient: AMBIENT });

describe("README.md", () => {
  it("has the TypeScript samples this test checks", () => {
    expect(samples.length).toBeGreaterThanOrEqual(4);
    expect(samples.join("")).toContain("createTenantClient(");
  });

  it("type-checks every TypeScript sample against the package's types", () => {
    expect(typeCheck(samples)).toEqual([]);
  }, 60_000);

  it("would catch a sample that no longer compiles", () => {
    const broken = samples.map((s) => s.replace("auth:", "authStrategy:"));
    expect(typeCheck(broken).some((d) => d.includes("authStrategy"))).toBe(true);
  }, 60_000);
});
