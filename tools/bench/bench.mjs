#!/usr/bin/env node
// `pnpm bench` at the root: every figure of the kit in one table, printed and written to
// BENCHMARKS.md with the machine and the date. Figures are compared with their goals; the script
// reports a missed goal and never fails on it (speed is measured here, never asserted in tests).
import { writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildTimes } from "./build-times.mjs";
import { bundleSizes } from "./sizes.mjs";
import { featureCosts } from "./size-what-if.mjs";
import { clientOverhead } from "./client-overhead.mjs";
import { docsLoad } from "./docs-load.mjs";
import { sandboxThroughput } from "./sandbox-throughput.mjs";
import { sandboxHeap } from "./sandbox-heap.mjs";
import { tokenManagerSpeed } from "./token-manager.mjs";
import { fileStorageFigures } from "./crash-window.mjs";
import { fleets } from "./fleets.mjs";
import { pythonClientOverhead } from "./python-client.mjs";
import { schemathesisLongRun } from "../schemathesis/bench.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");

const sections = [
  ["Bundle sizes", () => bundleSizes(here)],
  ["Bundle sizes: what each feature costs the typical app", () => featureCosts()],
  ["Client overhead", () => clientOverhead()],
  ["Token manager", () => tokenManagerSpeed()],
  ["File storage across processes", () => fileStorageFigures()],
  ["Fleets after expiry (TypeScript and Python, Redis and a token file)", () => fleets()],
  ["Refresh window", () => import("./refresh-window.mjs").then((m) => m.refreshWindow())],
  ["Python client overhead", () => pythonClientOverhead()],
  ["Sandbox throughput", () => sandboxThroughput()],
  ["Sandbox heap", () => sandboxHeap()],
  ["Build times", () => buildTimes(root)],
  ["Docs load", () => docsLoad(root)],
  ["Schemathesis, long run", () => schemathesisLongRun()],
];

const rows = [];
for (const [title, run] of sections) {
  process.stderr.write(`▶ ${title}…\n`);
  const start = performance.now();
  try {
    rows.push(...(await run()));
  } catch (error) {
    rows.push({ metric: title, value: `failed: ${error instanceof Error ? error.message.split("\n")[0] : error}`, goal: "", met: false });
  }
  process.stderr.write(`  done in ${((performance.now() - start) / 1000).toFixed(1)} s\n`);
}

const cell = (s) => String(s).replace(/\|/g, "\\|");
const verdict = (met) => (met === null ? "" : met ? "met" : "**missed**");
const table = [
  "| metric | value | goal | |",
  "|---|---|---|---|",
  ...rows.map((r) => `| ${cell(r.metric)} | ${cell(r.value)} | ${cell(r.goal)} | ${verdict(r.met)} |`),
].join("\n");

const machine = `${cpus()[0]?.model ?? "unknown CPU"}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${process.platform}-${process.arch}`;
const date = new Date().toISOString().slice(0, 10);
const missed = rows.filter((r) => r.met === false).length;

console.log(`\n${table}\n`);
console.log(`${rows.length} figures, ${missed} goals missed. Machine: ${machine}. Date: ${date}.`);

writeFileSync(
  join(root, "BENCHMARKS.md"),
  `# Benchmarks

Written by \`pnpm bench\` (tools/bench). Each figure is measured on the machine below; goals come from
the project's issues. Load generator, servers and browser share the machine.

- Machine: ${machine}
- Date: ${date}

${table}
`,
);
console.log("Wrote BENCHMARKS.md");
