#!/usr/bin/env node
// Sums the closing lines of every vitest run in a `pnpm test` log ("Tests  3 failed | 97 passed (100)"),
// prints one line per turbo task (so a reader sees, say, that the client's suite ran on Node 24 too)
// and one line for the whole repository: "Total: N passed, N failed".
import { readFileSync } from "node:fs";

const log = readFileSync(process.argv[2], "utf8").replace(/\x1b\[[0-9;]*m/g, "");
let passed = 0;
let failed = 0;
let skipped = 0;
const perTask = [];
for (const line of log.split("\n")) {
  const tests = /^(?:(\S+):\s+)?\s*Tests\s+(.*)\(\d+\)\s*$/.exec(line);
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
