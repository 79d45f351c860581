// The CI total counts Schemathesis's test cases beside vitest's and pytest's tests: the closing lines
// below are copied from real runs (turbo prefixes them with the task).
import { describe, expect, it } from "vitest";
import { summarize } from "../../ci/test-summary.mjs";
import { summary } from "../run.mjs";

const task = "@tenant-integration/schemathesis:test:";

describe("the CI test summary", () => {
  it("counts a Schemathesis run without failures: every generated test case passed", () => {
    const log = [
      `${task} Test cases:`,
      `${task}   528 generated, 528 passed`,
      `${task} ============================== 1 warning in 5.25s ==============================`,
    ].join("\n");
    expect(summarize(log)).toEqual([
      "1 test runs",
      `  ${"@tenant-integration/schemathesis:test".padEnd(48)} 528 passed, 0 failed (Schemathesis test cases)`,
      "Total: 528 passed, 0 failed",
    ]);
  });

  it("counts the test cases that found a failure, or errored, as failed, and those no check ran on as skipped", () => {
    const log = `${task}   203 generated, 2 found 2 unique failures, 1 errored, 4 skipped\n${task} ======================= 2 failures, 2 warnings in 3.29s ========================`;
    expect(summarize(log).at(-1)).toBe("Total: 196 passed, 3 failed, 4 skipped");
  });

  it("adds them to vitest's and pytest's counts, and takes a line of warnings alone for no run", () => {
    const log = [
      "@tenant-integration/client:test:       Tests  1 failed | 97 passed (98)",
      "@tenant-integration/python:test: 120 passed, 1 skipped in 41.20s",
      "@tenant-integration/python:test: =========== 3 warnings in 0.10s ===========",
      `${task}   10 generated, 10 passed`,
    ].join("\n");
    const lines = summarize(log);
    expect(lines[0]).toBe("3 test runs");
    expect(lines.at(-1)).toBe("Total: 227 passed, 1 failed, 1 skipped");
  });
});

describe("run.mjs's reading of a Schemathesis run", () => {
  it("finds the generated test cases and the failures of the closing summary", () => {
    expect(
      summary("Test cases:\n  528 generated, 528 passed\n\n==== SUMMARY ====\n=== 1 warning in 5.25s ==="),
    ).toEqual({ generated: 528, failures: 0 });
    expect(
      summary(
        "==== SUMMARY ====\nTest cases:\n  203 generated, 2 found 2 unique failures\n=== 2 failures, 2 warnings in 3.29s ===",
      ),
    ).toEqual({ generated: 203, failures: 2 });
  });
});

describe("the CI test summary's list of failed tests", () => {
  it("names every failed test just before the total, task by task, from vitest's, pytest's and Go's own lines, not Go's package lines", () => {
    const pg = "@tenant-integration/token-store-postgres:test:node24";
    const log = [
      `${pg}:  FAIL  test/faults.test.ts > PostgreSQL faults > a hot standby given as the primary`,
      `${pg}:        Tests  1 failed | 87 passed (88)`,
      "@tenant-integration/python:test: FAILED tests/test_loopback.py::test_visit - TimeoutError: no visit",
      "@tenant-integration/python:test: 1 failed, 835 passed in 300.10s",
      "@tenant-integration/go:test:     --- FAIL: TestBeat (0.20s)",
      "@tenant-integration/go:test: FAIL",
      "@tenant-integration/go:test: FAIL\tgithub.com/tenant-integration/sdk/packages/go/redisstorage\t79.913s",
      "@tenant-integration/go:test: FAIL github.com/tenant-integration/sdk/packages/go/redisstorage (35 tests, 79.914s)",
      "@tenant-integration/go:test: go test: 207 passed, 1 failed, 0 skipped (30 packages)",
    ].join("\n");
    const lines = summarize(log);
    expect(lines.slice(lines.indexOf("Failed tests:"), -1)).toEqual([
      "Failed tests:",
      `  ${"@tenant-integration/go:test".padEnd(48)} TestBeat`,
      `  ${"@tenant-integration/python:test".padEnd(48)} tests/test_loopback.py::test_visit`,
      `  ${pg.padEnd(48)} test/faults.test.ts > PostgreSQL faults > a hot standby given as the primary`,
    ]);
  });

  it("adds nothing when every test passed", () => {
    const lines = summarize("@tenant-integration/client:test:       Tests  97 passed (97)");
    expect(lines).not.toContain("Failed tests:");
  });
});
