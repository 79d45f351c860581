// The guide's "Testing your integration" samples, run as a reader would: the vitest one with vitest,
// the node:test one with Node, each as a test file in a fresh directory of this app, importing
// @tenant-integration/sandbox/testing as a dev dependency. A mutated sample must fail, so a sample
// that stopped testing anything would be caught.
import { rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { programDirectory, runProgram, runVitest, toJavaScript } from "@tenant-integration/readme-samples/run";
import { afterAll, describe, expect, it } from "vitest";
import { codeBlocks, section } from "./support/contract.js";

const docsDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const samples = codeBlocks(section("Testing your integration"), "ts");
const vitestSample = samples.find((s) => s.includes('from "vitest"')) ?? "";
const nodeTestSample = samples.find((s) => s.includes('from "node:test"')) ?? "";
const dir = programDirectory(docsDir, "testing-guide-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the guide's Testing your integration section", () => {
  it("has a vitest and a node:test sample, each on createTestTenant", () => {
    expect(vitestSample).toContain('from "@tenant-integration/sandbox/testing"');
    expect(nodeTestSample).toContain('from "@tenant-integration/sandbox/testing"');
    expect(section("Testing your integration")).toContain("tenant.advance(seconds)");
  });

  it("runs the vitest sample: its tests pass, and a mutated one fails", async () => {
    const run = await runVitest({ dir, name: "guide-vitest", source: vitestSample });
    expect(run.stdout + run.stderr).toMatch(/Tests\s+3 passed \(3\)/);
    expect(run.code).toBe(0);
    const mutated = await runVitest({
      dir,
      name: "guide-vitest-mutated",
      source: vitestSample.replace("toHaveLength(1)", "toHaveLength(0)"),
    });
    expect(mutated.stdout + mutated.stderr).toMatch(/1 failed/);
    expect(mutated.code).not.toBe(0);
  }, 120_000);

  it("runs the node:test sample: its tests pass, and a mutated one fails", async () => {
    const run = await runProgram({ dir, name: "guide-node-test", source: toJavaScript(nodeTestSample) });
    // node:test reports in TAP (`# pass 3`) on Node 20 without a terminal, in its spec format (`ℹ pass 3`) on Node 24.
    expect(run.stdout).toMatch(/^(# |ℹ )pass 3$/m);
    expect(run.code).toBe(0);
    const mutated = await runProgram({
      dir,
      name: "guide-node-test-mutated",
      source: toJavaScript(nodeTestSample.replace('"NOT_SIGNED_IN"', '"SESSION_ENDED"')),
    });
    expect(mutated.stdout).toMatch(/^(# |ℹ )fail 1$/m);
    expect(mutated.code).not.toBe(0);
  }, 60_000);
});
