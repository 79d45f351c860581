#!/usr/bin/env node
// `pnpm bench` at the root: every figure of the kit in one table, printed and written to
// BENCHMARKS.md with the machine, the date and how each row was measured. Figures are compared with
// their goals by the rule of stats.mjs (met only when the middle half of the paired rounds lies under
// the goal; "noise" when the A/A is wider than the distance to it; report.mjs writes the table); a
// missed goal is reported, never fatal (speed is measured here, never asserted in tests). A row that could not be measured (a peer app that does not work, a piece that threw) fails
// the run after the table is written.
//
// `node bench.mjs [--quick] [--only <text>]`: --quick runs every piece briefly (to check that it
// runs: its figures are not for comparing), --only runs the sections whose title contains <text>;
// either prints the table without writing BENCHMARKS.md.
import { existsSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildTimes, buildTimesMethod } from "./build-times.mjs";
import { bundleSizes, sizesMethod } from "./sizes.mjs";
import { featureSizes, featureSizesMethod } from "./feature-sizes.mjs";
import { clientOverhead, clientOverheadMethod } from "./client-overhead.mjs";
import { docsLoad, docsLoadMethod } from "./docs-load.mjs";
import { nodeImport, nodeImportMethod } from "./node-import.mjs";
import { sandboxMethod, sandboxThroughput } from "./sandbox-throughput.mjs";
import { sandboxHeap } from "./sandbox-heap.mjs";
import { tokenManagerMethod, tokenManagerSpeed } from "./token-manager.mjs";
import { fileStorageFigures } from "./crash-window.mjs";
import { fleets, fleetsMethod, postgresFleetsMethod } from "./fleets.mjs";
import { sessionsFleet, sessionsFleetMethod } from "./sessions-fleet.mjs";
import { sessionsMemory, sessionsMemoryMethod } from "./sessions-memory.mjs";
import { pythonClientOverhead, pythonMethod } from "./python-client.mjs";
import { benchmarksMarkdown, markdownTable, settle, summary, tally } from "./report.mjs";
import { QUICK } from "./stats.mjs";
import { schemathesisLongRun } from "../schemathesis/bench.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");
const only = process.argv.includes("--only") ? process.argv[process.argv.indexOf("--only") + 1] : undefined;

/** [title, run, how it was measured (for BENCHMARKS.md: a text, or a function giving it)] */
const sections = [
  ["Bundle sizes", () => bundleSizes(here), sizesMethod],
  ["Bundle sizes: what each opt-in feature costs the typical app", () => featureSizes(), featureSizesMethod],
  ["Client overhead (TypeScript), in-process and over loopback", () => clientOverhead(), clientOverheadMethod],
  ["Node import (TypeScript)", () => nodeImport(), nodeImportMethod],
  ["Token manager", () => tokenManagerSpeed(), tokenManagerMethod],
  [
    "File storage across processes",
    () => fileStorageFigures(),
    "Against the sandbox (`startSandbox`, strict rotation, a test clock), with the built token manager's `fileStorage(file)`. The crash window: in this process, 50 refreshes after expiry, each from the token response's text being received (the manager parses it at once) to the storage's `set` returning (temporary file fsynced, renamed, directory fsynced); the median and the 95th percentile. Random kills: a worker process (`file-process.mjs`: `fileStorage(file)` and nothing added) is released into a refresh after expiry and killed with SIGKILL at a random instant within 1.5× a refresh's median duration (from 5 refreshes first), 40 times; after each kill a fresh manager reads the file, and a session it finds ended (SESSION_ENDED) counts as lost; once with strict rotation and once with the sandbox's `--rotation-grace 30`. Counts, no comparison (no A/A). 20 TypeScript processes on one token file against one alone are in the fleet rows. Rerun: `node tools/bench/crash-window.mjs` after `pnpm build`.",
  ],
  [
    "Fleets after expiry (TypeScript, Python and Go, a token file and Redis): beside their floors, and what coordination costs",
    () => fleets(),
    fleetsMethod,
  ],
  [
    "PostgreSQL: fleets after expiry (every kit with a PostgreSQL storage), beside Redis in the same rounds",
    () => fleets("postgres"),
    postgresFleetsMethod,
  ],
  [
    "Many sessions: memory per session and a session's client (TypeScript, Python, Go)",
    () => sessionsMemory(),
    sessionsMemoryMethod,
  ],
  [
    "Many sessions: 1,000 sessions expiring together across 4 processes (Redis, PostgreSQL, a token file)",
    () => sessionsFleet(),
    sessionsFleetMethod,
  ],
  [
    "Refresh window",
    () => import("./refresh-window.mjs").then((m) => m.refreshWindow()),
    "The built token manager against the sandbox on loopback (strict rotation, a test clock), signed in, then 200 refreshes one after the other (the clock moved past expiry before each), with `fileStorage` (a temporary file) and with `redisStorage` (a throwaway redis-server): per refresh, the time from the storage lock's `isHeld()` answering (the manager's last ownership check) to the manager's `fetch` of the refresh request, in µs; the median and the 99th percentile. Reported, no goal, no comparison. Rerun: `node tools/bench/refresh-window.mjs` after `pnpm build`.",
  ],
  ["Python SDK: client overhead and import", () => pythonClientOverhead(), pythonMethod],
  [
    "Go SDK",
    () => goRows(),
    async () =>
      (existsSync(join(here, "go.mjs")) ? (await import("./go.mjs")).goMethod : undefined) ??
      "See `tools/bench/go.mjs`: the Go client against net/http with a static header, in-process and over loopback; 20 Go processes after expiry. Rerun: `node tools/bench/go.mjs`.",
  ],
  ["Sandbox throughput and CPU per request", () => sandboxThroughput(), sandboxMethod],
  [
    "Sandbox heap",
    () => sandboxHeap(),
    "The sandbox in a child process with `--expose-gc`: `process.memoryUsage().heapUsed` after a full collection, when fresh, after 20,000 sign-ins with a refresh each, and after the sandbox's clock passes 31 days (its records swept); one measurement each, after a full collection, so exact (no rounds, no A/A). Rerun: `node tools/bench/sandbox-heap.mjs`.",
  ],
  ["Build times", () => buildTimes(root), buildTimesMethod],
  ["Docs load", () => docsLoad(root), docsLoadMethod],
  [
    "Schemathesis, long run",
    () => schemathesisLongRun(),
    "Schemathesis (pinned in `tools/python/requirements.lock`, run from the repository's venv) against the sandbox's CLI on a free port, through the bundled contract `spec/dist/openapi.json`: seed 19, 500 examples per operation and phase, all checks, stateful, signed in through the auto-approve flow; a second pass calls GET /api/v1/auth/user with the token revoked. The test cases generated and the failures found: a count (exact). Rerun: `node tools/schemathesis/run.mjs --long` after `pnpm build`.",
  ],
];

/** The Go SDK's rows, from tools/bench/go.mjs (the Go engineer's) when it exists. */
async function goRows() {
  if (!existsSync(join(here, "go.mjs")))
    return [{ metric: "Go SDK", value: "left out: tools/bench/go.mjs is not there yet", goal: "", met: null }];
  const go = await import("./go.mjs");
  return go.goRows();
}

const rows = [];
const methods = [];
for (const [title, run, method] of sections) {
  if (only && !title.toLowerCase().includes(only.toLowerCase())) continue;
  process.stderr.write(`▶ ${title}…\n`);
  const start = performance.now();
  try {
    rows.push(...(await run()));
  } catch (error) {
    rows.push({
      metric: title,
      value: `failed: ${error instanceof Error ? error.message.split("\n")[0] : error}`,
      goal: "",
      met: false,
      failed: true,
    });
  }
  methods.push(`### ${title}\n\n${typeof method === "function" ? await method() : method}\n`);
  process.stderr.write(`  done in ${((performance.now() - start) / 1000).toFixed(1)} s\n`);
}

const settled = settle(rows);
const machine = `${cpus()[0]?.model ?? "unknown CPU"}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${process.platform}-${process.arch}`;
const date = new Date().toISOString().slice(0, 10);
const { failed, withoutAA } = tally(settled);

console.log(`\n${markdownTable(settled)}\n`);
console.log(`${summary(settled)} Machine: ${machine}. Date: ${date}.`);
if (withoutAA.length > 0)
  console.log(
    `Goals judged without an A/A (their piece measures none yet):\n${withoutAA.map((r) => `- ${r.metric}`).join("\n")}`,
  );

if (QUICK || only) {
  console.log("Not written to BENCHMARKS.md (--quick or --only).");
} else {
  writeFileSync(join(root, "BENCHMARKS.md"), benchmarksMarkdown({ machine, date, rows: settled, methods }));
  console.log("Wrote BENCHMARKS.md");
}
if (failed.length > 0) {
  console.error(
    `${failed.length} rows could not be measured:\n${failed.map((r) => `- ${r.metric}: ${r.value}`).join("\n")}`,
  );
  process.exitCode = 1;
}
