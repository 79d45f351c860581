#!/usr/bin/env node
// Sums the closing lines of every vitest run in a `pnpm test` log ("Tests  3 failed | 97 passed (100)")
// and prints one line for the whole repository: "Total: N passed, N failed".
import { readFileSync } from "node:fs";

const log = readFileSync(process.argv[2], "utf8").replace(/\x1b\[[0-9;]*m/g, "");
let passed = 0;
let failed = 0;
let skipped = 0;
let runs = 0;
for (const line of log.split("\n")) {
  const tests = /\bTests\s+(.*)\(\d+\)\s*$/.exec(line);
  if (!tests) continue;
  runs++;
  for (const [, count, kind] of tests[1].matchAll(/(\d+) (passed|failed|skipped|todo)/g)) {
    if (kind === "passed") passed += Number(count);
    else if (kind === "failed") failed += Number(count);
    else skipped += Number(count);
  }
}
console.log(`${runs} test runs`);
console.log(`Total: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
