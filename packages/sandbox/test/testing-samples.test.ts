/**
 * The README's "Testing your integration" samples, run as written: the vitest one with this
 * package's vitest, the `node:test` one with Node, each as a user's test file in a fresh directory.
 * The only change: `@tenant-integration/sandbox/testing` points at this package's build, since a
 * package does not resolve its own name from its node_modules. A mutated sample must fail, so a
 * sample that stopped testing anything would be caught.
 */
import { rmSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { readmeSamples } from "@tenant-integration/readme-samples";
import { programDirectory, runProgram, runVitest, toJavaScript } from "@tenant-integration/readme-samples/run";
import { afterAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));
const samples = readmeSamples(`${root}README.md`).filter((s) => s.includes("@tenant-integration/sandbox/testing"));
const vitestSample = samples.find((s) => s.includes('from "vitest"')) ?? "";
const nodeTestSample = samples.find((s) => s.includes('from "node:test"')) ?? "";
const built = pathToFileURL(`${root}dist/testing.js`).href;
const asBuilt = (sample: string) => sample.replaceAll('"@tenant-integration/sandbox/testing"', JSON.stringify(built));

const dir = programDirectory(root, "testing-samples-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the README's testing samples", () => {
  it("are in the README: one for vitest, one for node:test, each with the three tests", () => {
    for (const sample of [vitestSample, nodeTestSample]) {
      expect(sample).toContain("createTestTenant(");
      for (const name of ["refreshes after 16 minutes", "gets 403 without the scope", "is signed out once revoked"])
        expect(sample).toContain(name);
    }
  });

  it("pass with vitest, and a mutated one fails", async () => {
    const run = await runVitest({ dir, name: "readme-vitest", source: asBuilt(vitestSample) });
    expect(run.stdout + run.stderr).toMatch(/Tests\s+3 passed \(3\)/);
    expect(run.code).toBe(0);
    const mutated = await runVitest({
      dir,
      name: "readme-vitest-mutated",
      source: asBuilt(vitestSample.replace("toBe(403)", "toBe(200)")),
    });
    expect(mutated.stdout + mutated.stderr).toMatch(/1 failed/);
    expect(mutated.code).not.toBe(0);
  }, 120_000);

  it("pass with node:test, and a mutated one fails", async () => {
    const run = await runProgram({ dir, name: "readme-node-test", source: toJavaScript(asBuilt(nodeTestSample)) });
    // node:test reports in TAP (`# pass 3`) on Node 20 without a terminal, in its spec format (`ℹ pass 3`) on Node 24.
    expect(run.stdout).toMatch(/^(# |ℹ )pass 3$/m);
    expect(run.code).toBe(0);
    const mutated = await runProgram({
      dir,
      name: "readme-node-test-mutated",
      source: toJavaScript(asBuilt(nodeTestSample.replace("response.status, 403", "response.status, 200"))),
    });
    expect(mutated.stdout).toMatch(/^(# |ℹ )fail 1$/m);
    expect(mutated.code).not.toBe(0);
  }, 60_000);
});
