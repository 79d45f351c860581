#!/usr/bin/env node
// `pnpm bench` at the root: every figure of the kit in one table, printed and written to
// BENCHMARKS.md with the machine, the date and how each row was measured. Figures are compared with
// their goals; a missed goal is reported, never fatal (speed is measured here, never asserted in
// tests). A row that could not be measured (a peer app that does not work, a piece that threw) fails
// the run after the table is written.
//
// `node bench.mjs [--quick] [--only <text>]`: --quick runs every piece briefly (to check that it
// runs: its figures are not for comparing), --only runs the sections whose title contains <text>;
// either prints the table without writing BENCHMARKS.md.
import { existsSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildTimes } from "./build-times.mjs";
import { bundleSizes, sizesMethod } from "./sizes.mjs";
import { featureSizes, featureSizesMethod } from "./feature-sizes.mjs";
import { clientOverhead, clientOverheadMethod } from "./client-overhead.mjs";
import { docsLoad } from "./docs-load.mjs";
import { sandboxMethod, sandboxThroughput } from "./sandbox-throughput.mjs";
import { sandboxHeap } from "./sandbox-heap.mjs";
import { tokenManagerMethod, tokenManagerSpeed } from "./token-manager.mjs";
import { fileStorageFigures } from "./crash-window.mjs";
import { fleets, fleetsMethod } from "./fleets.mjs";
import { pythonClientOverhead, pythonMethod } from "./python-client.mjs";
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
  ["Token manager", () => tokenManagerSpeed(), tokenManagerMethod],
  [
    "File storage across processes",
    () => fileStorageFigures(),
    "1 vs 20 processes (`file-process.mjs`, `fileStorage(file)`) released together after expiry against the sandbox, in 11 interleaved rounds each released after the last one's writes settled; the median ratio with its spread. The crash window: token response parsed → rotated tokens durable, over 50 refreshes. SIGKILL at a random instant of 40 refreshes, with strict rotation and with `--rotation-grace 30`. Rerun: `node tools/bench/crash-window.mjs`.",
  ],
  [
    "Fleets after expiry (TypeScript and Python, Redis and a token file), each beside its floor",
    () => fleets(),
    fleetsMethod,
  ],
  [
    "Refresh window",
    () => import("./refresh-window.mjs").then((m) => m.refreshWindow()),
    "The token manager's last ownership check to its refresh request leaving, in µs, over 200 refreshes with `fileStorage` and `redisStorage`. Rerun: `node tools/bench/refresh-window.mjs`.",
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
    "In a child with `--expose-gc`: the heap after a full GC when fresh, after 20,000 sign-ins with a refresh each, and after the sandbox's clock passes 31 days. Rerun: `node tools/bench/sandbox-heap.mjs`.",
  ],
  [
    "Build times",
    () => buildTimes(root),
    "`turbo run build --force` (clean), then `turbo run build` (cached), wall time.",
  ],
  [
    "Docs load",
    () => docsLoad(root),
    "The offline docs page in the system Chromium (playwright-core): load and first rendered operation, median of 5.",
  ],
  [
    "Schemathesis, long run",
    () => schemathesisLongRun(),
    "Schemathesis against the sandbox: seed 19, 500 examples per operation and phase, all checks, stateful. Rerun: `node tools/schemathesis/bench.mjs`.",
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

const cell = (s) => String(s).replace(/\|/g, "\\|");
const verdict = (met) => (met === null ? "" : met ? "met" : "**missed**");
const table = [
  "| metric | value | goal | |",
  "|---|---|---|---|",
  ...rows.map((r) => `| ${cell(r.metric)} | ${cell(r.value)} | ${cell(r.goal)} | ${verdict(r.met)} |`),
].join("\n");

const machine = `${cpus()[0]?.model ?? "unknown CPU"}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${process.platform}-${process.arch}`;
const date = new Date().toISOString().slice(0, 10);
const missed = rows.filter((r) => r.met === false && !r.failed).length;
const failed = rows.filter((r) => r.failed);

console.log(`\n${table}\n`);
console.log(
  `${rows.length} figures, ${missed} goals missed, ${failed.length} rows failed. Machine: ${machine}. Date: ${date}.`,
);

if (QUICK || only) {
  console.log("Not written to BENCHMARKS.md (--quick or --only).");
} else {
  writeFileSync(
    join(root, "BENCHMARKS.md"),
    `# Benchmarks

Written by \`pnpm bench\` (tools/bench). Each figure is measured on the machine below; goals come from
the project's issues. Load generators, servers and browsers share the machine.

Every comparison is fair by rule (tools/bench/README.md, "Fair baselines"): the kit as its README
shows it (the token manager, the default clock) against each peer as its own README shows it (the
header set once on the client); every peer app in the size comparison signs in to the sandbox and
serves concurrent calls after expiry with one refresh before its bytes count. Timed comparisons are
paired: the contenders run in the same rounds, in a random order, and a row gives the median of the
rounds' ratios with their middle half and range. A wide range says the machine was busy, not that the
code changed: compare two runs made on an idle machine. How each row was measured, and how to rerun
it, is under the table.

- Machine: ${machine}
- Date: ${date}

${table}

## How each row was measured

${methods.join("\n")}`,
  );
  console.log("Wrote BENCHMARKS.md");
}
if (failed.length > 0) {
  console.error(
    `${failed.length} rows could not be measured:\n${failed.map((r) => `- ${r.metric}: ${r.value}`).join("\n")}`,
  );
  process.exitCode = 1;
}
