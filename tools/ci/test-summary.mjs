#!/usr/bin/env node
// Sums the closing lines of every vitest run in a `pnpm test` log ("Tests  3 failed | 97 passed (100)")
// and of every pytest run ("2 failed, 120 passed, 1 skipped in 41.20s"),
// prints one line per turbo task (so a reader sees, say, that the client's suite ran on Node 24 too)
// and one line for the whole repository: "Total: N passed, N failed".
import { readFileSync } from "node:fs";

const log = readFileSync(process.argv[2], "utf8").replace(/\x1b\[[0-9;]*m/g, "");
let passed = 0;
let failed = 0;
let skipped = 0;
const perTask = [];
for (const line of log.split("\n")) {
  const tests = /^(?:(\S+):\s+)?\s*Tests\s+(.*)\(\d+\)\s*$/.exec(line) ?? pytestSummary(line);
  if (!tests) continue;
  perTask.push(`  ${(tests[1] ?? "(no task prefix)").padEnd(48)} ${tests[2].trim()}`);
  for (const [, count, kind] of tests[2].matchAll(/(\d+) (passed|failed|skipped|todo)/g)) {
    if (kind === "passed") passed += Number(count);
    else if (kind === "failed") failed += Number(count);
    else skipped += Number(count);
  }
}
console.log(`${perTask.length} test runs`);
for (const line of perTask.sort()) console.log(line);
console.log(`Total: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);

/**
 * pytest's closing line, quiet ("120 passed, 1 skipped in 41.20s") or not ("=== 120 passed in 41.20s ==="),
 * behind turbo's task prefix, as [line, task, counts] like the vitest match; errors count as failures.
 */
function pytestSummary(line) {
  const match = /^(?:(\S+):\s+)?=*\s*((?:\d+ (?:passed|failed|skipped|errors?|xfailed|xpassed|deselected|warnings?)(?:, )?)+) in [\d.]+s\b/.exec(line);
  if (!match) return null;
  const counts = match[2].replace(/(\d+) errors?/g, "$1 failed").replace(/\d+ (?:xfailed|xpassed|deselected|warnings?)(?:, )?/g, "").replace(/, $/, "");
  return [line, match[1], counts];
}
