#!/usr/bin/env node
// Sums the closing lines of every test run in a `pnpm test` log: vitest ("Tests  3 failed | 97
// passed (100)"), pytest ("2 failed, 120 passed, 1 skipped in 41.20s"), Schemathesis ("528
// generated, 528 passed" under its "Test cases:" heading) and Go (packages/go/scripts/test.mjs's
// "go test: 131 passed, 0 failed, 2 skipped (11 packages)"; or, where `go test -v` or `go test
// -json` ran directly, its per-test results, counted at the leaves), prints one line per turbo task
// (so a reader sees, say, that the client's suite ran on Node 24 too) and one line for the whole
// repository: "Total: N passed, N failed", last. When tests failed, it names them before that line,
// task by task (vitest's "FAIL  file > test", pytest's "FAILED file::test", Go's "--- FAIL:
// TestName"), so the last lines of a CI log say which tests failed even when the log itself is cut.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The summary of a `pnpm test` log, as the lines this script prints. */
export function summarize(text) {
  const log = text.replace(/\x1b\[[0-9;]*m/g, "");
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const perTask = [];
  const runs = [];
  const goTests = new GoTests();
  const failedTests = new Set();
  for (const line of log.split("\n")) {
    const failure = failedTest(line);
    if (failure) failedTests.add(failure);
    const tests =
      /^(?:(\S+):\s+)?\s*Tests\s+(.*)\(\d+\)\s*$/.exec(line) ??
      schemathesisSummary(line) ??
      goSummary(line) ??
      pytestSummary(line);
    if (tests) runs.push(tests);
    else goTests.read(line);
  }
  // A task whose closing line is scripts/test.mjs's already counts its tests; the "--- FAIL" lines it
  // echoes for a failed test would count that test twice.
  const summed = new Set(runs.filter((run) => / \(go test\)$/.test(run[2])).map((run) => run[1]));
  runs.push(...goTests.runs().filter((run) => !summed.has(run[1])));
  for (const tests of runs) {
    perTask.push(`  ${(tests[1] ?? "(no task prefix)").padEnd(48)} ${tests[2].trim()}`);
    for (const [, count, kind] of tests[2].matchAll(/(\d+) (passed|failed|skipped|todo)/g)) {
      if (kind === "passed") passed += Number(count);
      else if (kind === "failed") failed += Number(count);
      else skipped += Number(count);
    }
  }
  return [
    `${perTask.length} test runs`,
    ...perTask.sort(),
    ...(failedTests.size ? ["Failed tests:", ...[...failedTests].sort().map((name) => `  ${name}`)] : []),
    `Total: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`,
  ];
}

/**
 * A failed test named by its runner, behind turbo's task prefix, as "task  name": vitest's
 * " FAIL  test/x.test.ts > suite > test", pytest's "FAILED tests/test_x.py::test_y - why" (the why
 * left out) and Go's "--- FAIL: TestName (0.01s)". A vitest file that failed as a whole ("FAIL
 * file [ file ]") is named too.
 */
function failedTest(line) {
  const match =
    /^(?:(\S+):\s+)?\s*FAIL\s+(\S.*?)\s*$/.exec(line) ??
    /^(?:(\S+):\s+)?\s*FAILED\s+(\S+?)(?: - .*)?\s*$/.exec(line) ??
    /^(?:(\S+):\s+)?\s*--- FAIL: (\S+) \(/.exec(line);
  // Go's package lines ("FAIL\t<package>\t79.9s", scripts/test.mjs's "FAIL <package> (35 tests, …)")
  // repeat a failed test named by its own "--- FAIL" line: they name no test.
  if (!match || /^\S+\s+(?:[\d.]+s|\(\d+ tests\b)/.test(match[2])) return null;
  return `${(match[1] ?? "(no task prefix)").padEnd(48)} ${match[2]}`;
}

/**
 * pytest's closing line, quiet ("120 passed, 1 skipped in 41.20s") or not ("=== 120 passed in 41.20s ==="),
 * behind turbo's task prefix, as [line, task, counts] like the vitest match; errors count as failures.
 * A line with nothing but warnings or deselected tests counts no run.
 */
function pytestSummary(line) {
  const match =
    /^(?:(\S+):\s+)?=*\s*((?:\d+ (?:passed|failed|skipped|errors?|xfailed|xpassed|deselected|warnings?)(?:, )?)+) in [\d.]+s\b/.exec(
      line,
    );
  if (!match) return null;
  const counts = match[2]
    .replace(/(\d+) errors?/g, "$1 failed")
    .replace(/\d+ (?:xfailed|xpassed|deselected|warnings?)(?:, )?/g, "")
    .replace(/, $/, "");
  return counts === "" ? null : [line, match[1], counts];
}

/**
 * Schemathesis's test-case line, the one under "Test cases:": "528 generated, 528 passed", or with
 * failures "203 generated, 2 found 2 unique failures", either followed by ", N errored" and ", N
 * skipped". Each generated test case counts once: a case with a failure or an error as failed, a
 * case no check ran on as skipped, every other one as passed.
 */
function schemathesisSummary(line) {
  const match = /^(?:(\S+):\s+)?\s*(\d+) generated, (.*)$/.exec(line);
  if (!match) return null;
  const count = (pattern) => Number(pattern.exec(match[3])?.[1] ?? 0);
  const withFailures = count(/(\d+) found \d+ unique failures?/);
  const errored = count(/(\d+) errored/);
  const skipped = count(/(\d+) skipped/);
  const failed = withFailures + errored;
  const passed = Number(match[2]) - failed - skipped;
  return [
    line,
    match[1],
    `${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""} (Schemathesis test cases)`,
  ];
}

/** The closing line of packages/go/scripts/test.mjs, behind turbo's task prefix. */
function goSummary(line) {
  const match = /^(?:(\S+):\s+)?\s*go test: (\d+ passed, \d+ failed, \d+ skipped)\b/.exec(line);
  return match ? [line, match[1], `${match[2]} (go test)`] : null;
}

/**
 * The results of `go test -v` ("--- PASS: TestName (0.01s)", indented for subtests) and `go test
 * -json` ({"Action":"pass","Package":…,"Test":…}) where they appear in the log themselves, per task.
 * A test counts once, at its leaves: a test with subtests counts as its subtests.
 */
class GoTests {
  /** task -> (package + test name -> pass | fail | skip) */
  #tasks = new Map();

  read(line) {
    const verbose = /^(?:(\S+):\s+)?\s*--- (PASS|FAIL|SKIP): (\S+) \(/.exec(line);
    if (verbose) return this.#note(verbose[1], "", verbose[3], verbose[2].toLowerCase());
    const json = /^(?:(\S+):\s+)?\s*(\{"Time".*|\{"Action".*)$/.exec(line);
    if (!json) return;
    let event;
    try {
      event = JSON.parse(json[2]);
    } catch {
      return;
    }
    if (event.Test && ["pass", "fail", "skip"].includes(event.Action))
      this.#note(json[1], event.Package ?? "", event.Test, event.Action);
  }

  #note(task, pkg, test, outcome) {
    const key = task ?? "(no task prefix)";
    if (!this.#tasks.has(key)) this.#tasks.set(key, new Map());
    this.#tasks.get(key).set(`${pkg} ${test}`, outcome);
  }

  runs() {
    return [...this.#tasks].map(([task, outcomes]) => {
      const names = [...outcomes.keys()];
      const leaves = names.filter((name) => !names.some((other) => other.startsWith(`${name}/`)));
      const count = (kind) => leaves.filter((name) => outcomes.get(name) === kind).length;
      const skipped = count("skip");
      return [
        task,
        task === "(no task prefix)" ? undefined : task,
        `${count("pass")} passed, ${count("fail")} failed${skipped ? `, ${skipped} skipped` : ""} (go test)`,
      ];
    });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const line of summarize(readFileSync(process.argv[2], "utf8"))) console.log(line);
}
