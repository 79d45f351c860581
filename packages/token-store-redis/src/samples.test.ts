/**
 * Regression guard: every ```ts sample of README.md type-checks against the package's own sources
 * (and the real `redis` and token manager types), so a sample that stops compiling (a renamed
 * option, a changed signature) fails `pnpm test`. See tools/readme-samples.
 */
import { fileURLToPath } from "node:url";
import { readmeSamples, typeCheckSamples } from "@tenant-integration/readme-samples";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));
const samples = readmeSamples(`${root}README.md`);
const paths = { "@tenant-integration/token-store-redis": ["./src/index.ts"] };

/** What the samples call but leave to the app. */
const AMBIENT = `
declare const tm: import("@tenant-integration/token-manager").TokenManager;
declare function retryLater(): void;
declare function reportToMonitoring(code: string, message: string): void;
`;

const typeCheck = (sources: readonly string[]) => typeCheckSamples({ root, samples: sources, paths, ambient: AMBIENT });

describe("README.md", () => {
  it("has the TypeScript samples this test checks", () => {
    expect(samples.length).toBeGreaterThanOrEqual(3);
    expect(samples.join("")).toContain("storage: redisStorage(client)");
  });

  it("type-checks every TypeScript sample against the package's types", () => {
    expect(typeCheck(samples)).toEqual([]);
  }, 60_000);

  it("would catch a sample that no longer compiles", () => {
    const broken = samples.map((s) => s.replace("leaseMs:", "leaseMillis:"));
    expect(typeCheck(broken).some((d) => d.includes("leaseMillis"))).toBe(true);
  }, 60_000);
});
