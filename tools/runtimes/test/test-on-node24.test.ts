import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { findRuntimes } from "@tenant-integration/runtimes";

const runner = fileURLToPath(new URL("../test-on-node24.mjs", import.meta.url));
const fixture = fileURLToPath(new URL("./fixtures/node-version/", import.meta.url));
const node24 = findRuntimes().found.find((r) => r.name === "node24");

function run(env: Record<string, string | undefined>) {
  const { CI: _ci, NODE24_PATH: _path, ...rest } = process.env;
  const result = spawnSync(process.execPath, [runner], {
    cwd: fixture,
    env: { ...rest, ...env } as NodeJS.ProcessEnv,
    encoding: "utf8",
    timeout: 50_000,
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}`.replace(/\x1b\[[0-9;]*m/g, "") };
}

describe("test-on-node24", () => {
  it("fails in CI when Node 24 is missing, and names it", () => {
    const { status, output } = run({ CI: "true", NODE24_PATH: "/nonexistent/node24" });
    expect(status).toBe(1);
    expect(output).toContain("Node 24 is required in CI and is missing: /nonexistent/node24 does not exist");
  });

  it("outside CI leaves the run out with a warning that says how to install Node 24", () => {
    const { status, output } = run({ NODE24_PATH: "/nonexistent/node24" });
    expect(status).toBe(0);
    expect(output).toContain("left out, Node 24 is missing");
    expect(output).toContain("tools/runtimes/install.mjs");
    expect(output).not.toContain("passed");
  });

  // In CI, Node 24 is always installed (the first test's rule); locally it may not be.
  it.skipIf(!node24 && process.env.CI !== "true")("runs the package's suite on Node 24", () => {
    const { status, output } = run({ NODE24_PATH: node24?.command, EXPECT_NODE_MAJOR: "24" });
    expect(output).toMatch(/test-on-node24: v24\.\d+\.\d+/);
    expect(output).toMatch(/Tests\s+1 passed \(1\)/);
    expect(status).toBe(0);
  });

  it.skipIf(!node24 && process.env.CI !== "true")("exits non-zero when a test fails on Node 24", () => {
    const { status, output } = run({ NODE24_PATH: node24?.command, EXPECT_NODE_MAJOR: "20" });
    expect(output).toMatch(/Tests\s+1 failed \(1\)/);
    expect(status).not.toBe(0);
  });
});
