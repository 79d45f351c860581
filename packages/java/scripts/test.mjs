// pnpm test for the Java reactor: `./mvnw test` (test:unit: --unit, without the tests tagged
// "process", which start the sandbox, redis-server or other JVMs), then one line per failing test and
// a closing line in pytest's words, which tools/ci/test-summary.mjs counts. The goal is `test`, not
// `verify`: it leaves the jars alone, which the conformance suite's Java actors run from while pnpm test
// runs both at once. Only the reports this run wrote are counted.
//   java (maven): 142 passed, 0 failed, 2 skipped in 61.20s
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { mvn, requireJava, root } from "./java.mjs";

requireJava("test");
const unit = process.argv.includes("--unit");
const started = performance.now();
// Wall-clock, to compare with the reports' modification times (a report older than this run is stale).
const startedAt = Date.now();
const status = mvn(
  ["-q", "test", "-Dsurefire.failIfNoSpecifiedTests=false", ...(unit ? ["-DexcludedGroups=process"] : [])],
  {
    exit: false,
  },
);

let passed = 0;
let failed = 0;
let skipped = 0;
for (const module of readdirSync(root, { withFileTypes: true })) {
  const reports = join(root, module.name, "target", "surefire-reports");
  if (!module.isDirectory() || !existsSync(reports)) continue;
  const fresh = (name) => statSync(join(reports, name)).mtimeMs >= startedAt - 1000;
  for (const file of readdirSync(reports).filter(
    (name) => name.startsWith("TEST-") && name.endsWith(".xml") && fresh(name),
  )) {
    const xml = readFileSync(join(reports, file), "utf8");
    for (const match of xml.matchAll(
      /<testcase\b[^>]*?name="([^"]*)"[^>]*?classname="([^"]*)"[^>]*?(\/>|>([\s\S]*?)<\/testcase>)/g,
    )) {
      const body = match[4] ?? "";
      if (/<(failure|error)\b/.test(body)) {
        failed++;
        const message = /<(?:failure|error)\b[^>]*?message="([^"]*)"/.exec(body)?.[1] ?? "";
        console.log(`FAIL ${match[2]}.${match[1]}: ${message.slice(0, 300)}`);
      } else if (/<skipped\b/.test(body)) skipped++;
      else passed++;
    }
  }
}
const seconds = ((performance.now() - started) / 1000).toFixed(2);
// Maven failing without a failed test (a compile error, a crashed fork) counts once.
if (status !== 0 && failed === 0) failed = 1;
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped in ${seconds}s (java, maven surefire)`);
process.exit(status !== 0 || failed > 0 ? 1 : 0);
