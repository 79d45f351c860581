/**
 * Regression guard: every ```ts sample of README.md type-checks against the package's own sources
 * (and the real `pg` and token manager types), so a sample that stops compiling (a renamed option, a
 * changed signature) fails `pnpm test`; and the README's SQL is the shared schema.sql. See
 * tools/readme-samples.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { readmeSamples, typeCheckSamples } from "@tenant-integration/readme-samples";
import { describe, expect, it } from "vitest";
import { schemaSql } from "./index.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const samples = readmeSamples(`${root}README.md`);
const paths = { "@tenant-integration/token-store-postgres": ["./src/index.ts"] };

/** What the samples call but leave to the app. */
const AMBIENT = `
declare const tm: import("@tenant-integration/token-manager").TokenManager;
declare function retryLater(): void;
declare function reportToMonitoring(error: Error): void;
`;

const typeCheck = (sources: readonly string[]) => typeCheckSamples({ root, samples: sources, paths, ambient: AMBIENT });

describe("README.md", () => {
  it("has the TypeScript samples this test checks", () => {
    expect(samples.length).toBeGreaterThanOrEqual(3);
    expect(samples.join("")).toContain("storage: postgresStorage(pool, tenant)");
  });

  it("type-checks every TypeScript sample against the package's types", () => {
    expect(typeCheck(samples)).toEqual([]);
  }, 60_000);

  it("would catch a sample that no longer compiles", () => {
    const broken = samples.map((s) => s.replace("waitTimeoutMs:", "waitTimeoutMillis:"));
    expect(typeCheck(broken).some((d) => d.includes("waitTimeoutMillis"))).toBe(true);
  }, 60_000);

  it("shows the table's schema as schemaSql() gives it, comments and all", () => {
    const sql = /```sql\n([\s\S]*?)```/.exec(readFileSync(`${root}README.md`, "utf8"))?.[1];
    expect(sql).toBe(schemaSql());
  });
});
