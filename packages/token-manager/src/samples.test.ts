/**
 * Regression guard: every ```ts sample of README.md type-checks against the package's own sources,
 * so a sample that stops compiling (a renamed option, a changed signature) fails `pnpm test`.
 *
 * The samples are compiled in memory as modules of this package, with the import specifiers mapped
 * to `src/`, under the package's tsconfig (see tools/readme-samples). The few names a sample uses
 * without defining (the app's own functions, and the `tm` of the first sample) are declared in
 * {@link AMBIENT}.
 */
import { fileURLToPath } from "node:url";
import { readmeSamples, typeCheckSamples } from "@tenant-integration/readme-samples";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));
const samples = readmeSamples(`${root}README.md`);

const paths = {
  "@tenant-integration/token-manager": ["./src/index.ts"],
  "@tenant-integration/token-manager/node": ["./src/node/index.ts"],
};

/** What the samples call but leave to the app. */
const AMBIENT = `
declare const tm: import("@tenant-integration/token-manager").TokenManager;
declare function showSignInButton(): void;
declare function showOfflineBanner(): void;
declare function appUserId(request: Request): string | undefined;
`;

const typeCheck = (sources: readonly string[]) => typeCheckSamples({ root, samples: sources, paths, ambient: AMBIENT });

describe("README.md", () => {
  it("has the TypeScript samples this test checks", () => {
    expect(samples.length).toBeGreaterThanOrEqual(4);
    expect(samples.join("")).toContain("createTokenManager(");
  });

  it("type-checks every TypeScript sample against the package's types", () => {
    expect(typeCheck(samples)).toEqual([]);
  }, 60_000);

  it("would catch a sample that no longer compiles", () => {
    const broken = samples.map((s) => s.replace("clientId:", "clientIdentifier:"));
    expect(typeCheck(broken).some((d) => d.includes("clientIdentifier"))).toBe(true);
  }, 60_000);
});
