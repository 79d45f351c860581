/**
 * Regression guard: every ```ts sample of README.md type-checks against the package's own sources,
 * so a sample that stops compiling (a renamed option, a changed signature) fails `pnpm test`.
 *
 * The samples are compiled in memory as modules of this package, with `@tenant-integration/sandbox`
 * (and `/testing`) mapped to `src/`, under the package's tsconfig (see tools/readme-samples). The vitest samples
 * resolve `vitest` as an app's tests would; they define everything they use, so no ambient
 * declarations are needed.
 */
import { fileURLToPath } from "node:url";
import { readmeSamples, typeCheckSamples } from "@tenant-integration/readme-samples";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));
const samples = readmeSamples(`${root}README.md`);

const paths = {
  "@tenant-integration/sandbox": ["./src/index.ts"],
  "@tenant-integration/sandbox/testing": ["./src/testing.ts"],
};

const typeCheck = (sources: readonly string[]) => typeCheckSamples({ root, samples: sources, paths });

describe("README.md", () => {
  it("has the TypeScript samples this test checks", () => {
    expect(samples.length).toBeGreaterThanOrEqual(3);
    expect(samples.join("")).toContain("createSandbox(");
    expect(samples.join("")).toContain("startSandbox(");
  });

  it("type-checks every TypeScript sample against the package's types", () => {
    expect(typeCheck(samples)).toEqual([]);
  }, 60_000);

  it("would catch a sample that no longer compiles", () => {
    const broken = samples.map((s) => s.replace("redirectUris:", "redirectUrls:"));
    expect(typeCheck(broken).some((d) => d.includes("redirectUrls"))).toBe(true);
  }, 60_000);
});
