// The CI total counts the Go module's tests beside vitest's, pytest's and Schemathesis's: the closing
// line of packages/go/scripts/test.mjs, and the per-test lines of `go test -v` and `go test -json`
// where a log holds them (turbo prefixes every line with the task).
import { describe, expect, it } from "vitest";
import { summarize } from "../../ci/test-summary.mjs";

const task = "@tenant-integration/go:test:";

describe("the CI test summary of Go tests", () => {
  it("counts the closing line of the Go module's test script", () => {
    const log = [
      `${task} ok   github.com/tenant-integration/sdk/packages/go/transport (20 tests, 1.04s)`,
      `${task} go test: 131 passed, 1 failed, 2 skipped (13 packages)`,
    ].join("\n");
    expect(summarize(log)).toEqual([
      "1 test runs",
      `  ${"@tenant-integration/go:test".padEnd(48)} 131 passed, 1 failed, 2 skipped (go test)`,
      "Total: 131 passed, 1 failed, 2 skipped",
    ]);
  });

  it("counts go test -v results at their leaves: a test with subtests counts as its subtests", () => {
    const log = [
      `${task} === RUN   TestParse`,
      `${task} === RUN   TestParse/seconds`,
      `${task}     --- PASS: TestParse/seconds (0.00s)`,
      `${task}     --- FAIL: TestParse/date (0.00s)`,
      `${task} --- FAIL: TestParse (0.00s)`,
      `${task} --- PASS: TestRetry (0.01s)`,
      `${task} --- SKIP: TestSandbox (0.00s)`,
    ].join("\n");
    expect(summarize(log).at(-1)).toBe("Total: 2 passed, 1 failed, 1 skipped");
  });

  it("counts go test -json events, and adds them to the other runners' counts", () => {
    const event = (action, test, pkg = "example.com/m/transport") =>
      JSON.stringify({ Time: "2026-01-01T00:00:00Z", Action: action, Package: pkg, Test: test, Elapsed: 0 });
    const log = [
      `${task} ${event("run", "TestA")}`,
      `${task} ${event("pass", "TestA")}`,
      `${task} ${event("pass", "TestA", "example.com/m/loopback")}`,
      `${task} ${event("fail", "TestB")}`,
      `${task} ${JSON.stringify({ Action: "pass", Package: "example.com/m/transport", Elapsed: 1 })}`,
      "@tenant-integration/client:test:       Tests  97 passed (97)",
    ].join("\n");
    const lines = summarize(log);
    expect(lines[0]).toBe("2 test runs");
    expect(lines.at(-1)).toBe("Total: 99 passed, 1 failed");
  });
});

describe("the CI test summary of a failed Go run", () => {
  it("counts a failed test once: scripts/test.mjs's closing line, not again from the --- FAIL line it echoes", () => {
    const task = "@tenant-integration/go:test:";
    const log = [
      `${task} --- FAIL: TestAClusterThatIsDownIsStorageFailedSayingSo (30.52s)`,
      `${task} FAIL\tgithub.com/tenant-integration/sdk/packages/go/redisstorage\t79.913s`,
      `${task} go test: 211 passed, 1 failed, 0 skipped (12 packages)`,
    ].join("\n");
    const lines = summarize(log);
    expect(lines[0]).toBe("1 test runs");
    expect(lines.at(-1)).toBe("Total: 211 passed, 1 failed");
  });
});
