#!/usr/bin/env node
// Installs Node 24, Bun, Deno and workerd from the npm registry (their packages ship the binaries) into the
// runtimes folder, at the pinned versions, unless they are there already. CI runs it; so can you.
import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { findRuntimes, pinned, runtimesDir } from "./index.mjs";

const before = findRuntimes();
const want = ["node24", "bun", "deno", "workerd"];
if (want.every((name) => before.found.some((r) => r.name === name))) {
  for (const r of before.found) console.log(`✔ ${r.name} ${r.version}`);
  process.exit(0);
}
mkdirSync(runtimesDir, { recursive: true });
const specs = Object.entries(pinned).map(([name, version]) => `${name}@${version}`);
console.log(`Installing ${specs.join(", ")} into ${runtimesDir} …`);
const result = spawnSync(
  "npm",
  ["install", "--no-save", "--no-audit", "--no-fund", "--prefix", runtimesDir, ...specs],
  { stdio: "inherit" },
);
if (result.status !== 0) {
  console.error("✖ npm install of the runtimes failed");
  process.exit(result.status ?? 1);
}
const after = findRuntimes();
for (const r of after.found) console.log(`✔ ${r.name} ${r.version}`);
for (const m of after.missing) console.error(`✖ ${m.name}: ${m.why}`);
process.exit(want.every((name) => after.found.some((r) => r.name === name)) ? 0 : 1);
