// The conformance matrix at the reduced geometry: every scenario of spec/conformance/scenarios, for
// every target present (in CI: all of them) alone and in mixed fleets, against one sandbox, one
// redis-server, one Redis Cluster, one PostgreSQL and one Chromium (a run that restarts, stops or
// kills Redis or PostgreSQL has a server or a cluster of its own). A run passes when every step went as the scenario says and every
// invariant held; a failure names the step, the actor and what the tenant saw. Runs go three at a
// time, each lane with a sandbox of its own (vitest.config.ts: maxConcurrency).
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  loadScenarios,
  markdown,
  matrix,
  notRun,
  openSuite,
  plan,
  survey,
  type Run,
  type RunResult,
  type Suite,
} from "../src/suite/index.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const found = survey();
const runs = plan({ geometry: "reduced", targets: found.targets, redis: found.redis, postgres: found.postgres });
const results: RunResult[] = [];
const LANES = 3;
let suite: Suite;

beforeAll(async () => {
  suite = await openSuite({ runs, redis: found.redis, lanes: LANES });
}, 120_000);

afterAll(async () => {
  await suite?.close();
  // The matrix of this run, for a reader of a failed CI log (the committed one is pnpm conformance's).
  const out = join(here, "..", ".results");
  mkdirSync(out, { recursive: true });
  const report = matrix(results, {
    geometry: "reduced",
    redis: found.redis?.version,
    postgres: found.postgres?.version,
    missing: found.missing,
    scenarios: loadScenarios(),
    notRun: notRun(loadScenarios(), found.targets),
  });
  writeFileSync(join(out, "last-run.json"), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(out, "last-run.md"), markdown(report));
});

describe("the targets", () => {
  it("are all present in CI (every actor, redis-server and PostgreSQL); locally, the missing ones are named", () => {
    for (const missing of found.missing) console.warn(`conformance: ${missing.name} left out: ${missing.why}`);
    if (process.env.CI === "true") expect(found.missing).toEqual([]);
    expect(found.targets).toContain("node");
  });
});

describe.concurrent.each([...new Set(runs.map((run) => run.scenario))])("%s", (scenario) => {
  const own = runs.filter((run) => run.scenario === scenario);
  const cases: [string, Run][] = own.map((run) => [run.id.slice(scenario.length + 3), run]);
  it.for(cases)("%s", { timeout: 300_000 }, async ([, run], { expect }) => {
    const result = await suite.run(run);
    results.push(result);
    expect(result.failures).toEqual([]);
  });
});
