#!/usr/bin/env node
// pnpm conformance [--full] [--scenario NAME] [--storage STORAGE] [--mix TARGET|mixed] [--out DIR] [--lanes N]
//   [--transcripts DIR]
//
// Runs the conformance matrix against one sandbox and prints a line per run; writes the matrix to
// DIR/last-run.json and DIR/last-run.md (default: tools/conformance/results, which the docs site's
// "Conformance" page shows). --full runs at the documented defaults (a 10 s stale bound, 13 s
// pauses, fleets of 100, 30 s outages); without it, at the reduced geometry pnpm test uses. Runs go
// in N parallel lanes, each with its own sandbox: by default 3 at the reduced geometry, and at the
// full one a lane per two cores (one on a 2-core machine: three lanes of 100-process fleets drove
// one to a load of 50, and actors then missed their bounds). --transcripts keeps every line each
// actor printed, per run, in DIR (also CONFORMANCE_TRANSCRIPTS=DIR).
import { mkdirSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { markdown, matrix } from "./report.mjs";
import { loadScenarios, notRun, ScenarioError, REPO } from "./scenarios.mjs";
import { openSuite, plan, survey } from "./suite.mjs";

const { values } = parseArgs({
  options: {
    full: { type: "boolean", default: false },
    scenario: { type: "string", multiple: true },
    storage: { type: "string", multiple: true },
    mix: { type: "string", multiple: true },
    out: { type: "string", default: join(REPO, "tools", "conformance", "results") },
    lanes: { type: "string" },
    transcripts: { type: "string" },
  },
});
const geometry = values.full ? "full" : "reduced";
/** Lanes the machine can carry: fleets of 100 processes per lane at the full geometry. */
const lanes = Number(values.lanes ?? (values.full ? Math.max(1, Math.floor(availableParallelism() / 2)) : 3));
if (values.transcripts) process.env.CONFORMANCE_TRANSCRIPTS = values.transcripts;
const keep = (list, value) => !list || list.includes(value);

const found = survey();
for (const missing of found.missing) console.warn(`conformance: ${missing.name} left out: ${missing.why}`);
if (process.env.CI === "true" && found.missing.length > 0) {
  console.error("conformance: in CI every target and redis-server must be present");
  process.exit(1);
}
let runs;
try {
  runs = plan({
    geometry,
    targets: found.targets,
    redis: found.redis,
    postgres: found.postgres,
    filter: (run) =>
      keep(values.scenario, run.scenario) && keep(values.storage, run.storage) && keep(values.mix, run.mix),
  });
} catch (error) {
  if (error instanceof ScenarioError) {
    console.error(error.message);
    process.exit(2);
  }
  throw error;
}
console.log(`conformance: ${runs.length} runs at the ${geometry} geometry, in ${lanes} lane${lanes === 1 ? "" : "s"}`);
const suite = await openSuite({ runs, redis: found.redis, lanes });
const results = [];
const stop = async () => {
  await suite.close();
  process.exit(130);
};
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
try {
  let done = 0;
  await Promise.all(
    runs.map(async (run, index) => {
      const result = await suite.run(run);
      results[index] = result;
      const tally = `${result.refreshes ?? "?"} refreshes / ${result.expiries} expiries, worst wait ${result.worstWaitMs} ms, ${(result.ms / 1000).toFixed(1)} s`;
      console.log(`${result.passed ? "pass" : "FAIL"} ${++done}/${runs.length} ${run.id}: ${tally}`);
      for (const failure of result.failures) console.log(`     ${failure.replace(/\n/g, "\n     ")}`);
    }),
  );
} finally {
  await suite.close();
}
const ran = new Set(runs.map((run) => run.scenario));
const chosen = loadScenarios().filter((scenario) => keep(values.scenario, scenario.name));
const report = matrix(results, {
  geometry,
  redis: found.redis?.version,
  postgres: found.postgres?.version,
  missing: found.missing,
  scenarios: loadScenarios().filter((scenario) => ran.has(scenario.name)),
  // The targets a scenario leaves out for a feature their actor lacks, among those chosen.
  notRun: notRun(
    chosen,
    found.targets.filter((target) => keep(values.mix, target)),
    geometry,
  ),
});
for (const entry of report.notRun)
  console.log(`conformance: ${entry.scenario} not run on ${entry.targets.join(", ")}: ${entry.why}`);
mkdirSync(values.out, { recursive: true });
writeFileSync(join(values.out, "last-run.json"), `${JSON.stringify(report, null, 2)}\n`);
writeFileSync(join(values.out, "last-run.md"), markdown(report));
console.log(
  `conformance: ${report.passed} passed, ${report.failed} failed; the matrix is in ${join(values.out, "last-run.md")}`,
);
process.exit(report.failed > 0 ? 1 : 0);
