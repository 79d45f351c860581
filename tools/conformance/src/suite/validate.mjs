#!/usr/bin/env node
// pnpm lint: every scenario of spec/conformance/scenarios matches scenario.schema.json and the
// rules beside it (scenarios.mjs), and expands into runs. Prints the file, line and field of the
// first problem of each bad file.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { expand, loadScenario, SCENARIO_DIR, ScenarioError } from "./scenarios.mjs";

let bad = 0;
let runs = 0;
const files = readdirSync(SCENARIO_DIR).filter((name) => name.endsWith(".yaml"));
for (const name of files) {
  try {
    const scenario = loadScenario(join(SCENARIO_DIR, name));
    runs += expand(scenario, { geometry: "reduced" }).length + expand(scenario, { geometry: "full" }).length;
  } catch (error) {
    if (!(error instanceof ScenarioError)) throw error;
    console.error(error.message);
    bad++;
  }
}
if (bad > 0) {
  console.error(`conformance: ${bad} of ${files.length} scenarios are invalid`);
  process.exit(1);
}
console.log(`conformance: ${files.length} scenarios valid (${runs} runs over both geometries)`);
