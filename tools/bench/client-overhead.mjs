// The client's per-call overhead: tenant client vs bare openapi-fetch (with and without the same
// bearer header) vs raw fetch, for a GET and for a 1 KB JSON POST, with a stub fetch (the library's
// own cost, CPU time) and over loopback HTTP (what a caller sees, wall time).
//
// The method (issue 20: the former one, every contender in one process one after the other, printed
// +25.6 % where the true figure was +3.6 %): each contender runs in a process of its own
// (overhead-worker.mjs), so no contender inherits another's JIT state or garbage; rounds are paired
// and shuffled (every round runs every contender once, in a new random order), and a comparison is
// the median over rounds of that round's ratio, with its spread (lowest and highest round) printed;
// the loopback server runs in its own process on the other core (pinning.mjs). The goal is judged
// like for like: bare openapi-fetch sending the same bearer header.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { median, placement, runJson, shuffled, spawnNode } from "./pinning.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const CONTENDERS = ["raw", "bare", "bareNoHeader", "bareTimeout", "tenant", "tenantTimeout", "barePost", "tenantPost"];

/** Runs `rounds` paired rounds of every contender; returns each contender's µs/call per round. */
async function rounds(mode, url, count, calls, warmup) {
  const times = Object.fromEntries(CONTENDERS.map((name) => [name, []]));
  for (let r = 0; r < count; r++) {
    for (const name of shuffled(CONTENDERS)) {
      const { usPerCall } = await runJson([join(here, "overhead-worker.mjs"), name, mode, url, String(calls), String(warmup)]);
      times[name].push(usPerCall);
    }
  }
  return times;
}

async function startServer() {
  const child = spawnNode("server", [join(here, "server-process.mjs"), "json"], { stdio: ["ignore", "pipe", "inherit"] });
  const info = await new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line) resolve(JSON.parse(line));
    });
    child.on("exit", (code) => reject(new Error(`server exited (${code})`)));
  });
  return { url: info.url, stop: () => child.kill("SIGTERM") };
}

/** `a` against `b`: the median of the rounds' percentage differences, and their spread. */
function compare(times, a, b) {
  const diffs = times[a].map((t, i) => ((t - times[b][i]) / times[b][i]) * 100);
  return { pct: median(diffs), low: Math.min(...diffs), high: Math.max(...diffs), a: median(times[a]), b: median(times[b]) };
}

function rows(label, times, withGoal) {
  const row = (metric, c, goal) => ({
    metric: `${metric} (${label})`,
    value: `${c.pct.toFixed(1)} % (${c.a.toFixed(2)} vs ${c.b.toFixed(2)} µs/call; rounds from ${c.low.toFixed(1)} to ${c.high.toFixed(1)} %)`,
    goal: goal ? "≤ 10 %" : "",
    met: goal ? c.pct <= 10 : null,
  });
  return [
    row("client overhead vs bare openapi-fetch sending the same bearer header, GET", compare(times, "tenant", "bare"), withGoal),
    row("client overhead vs bare openapi-fetch sending the same bearer header, POST of 1 KB JSON", compare(times, "tenantPost", "barePost"), false),
    row("client with timeoutMs 30 s vs bare openapi-fetch with the same header and a 30 s timeout signal", compare(times, "tenantTimeout", "bareTimeout"), false),
    row("client overhead vs bare openapi-fetch sending no header", compare(times, "tenant", "bareNoHeader"), false),
    row("client overhead vs raw fetch", compare(times, "tenant", "raw"), false),
  ];
}

export async function clientOverhead() {
  const stubRounds = 7;
  const stub = await rounds("stub", "https://acme.tenant.test", stubRounds, 10_000, 3_000);
  const server = await startServer();
  const loopbackRounds = 5;
  try {
    const loopback = await rounds("loopback", server.url, loopbackRounds, 1_000, 300);
    return [
      ...rows(`stub fetch, CPU time, one process per contender, median of ${stubRounds} shuffled rounds`, stub, true),
      ...rows(`loopback HTTP, wall time, one process per contender, ${placement}, median of ${loopbackRounds} shuffled rounds`, loopback, false),
    ];
  } finally {
    server.stop();
  }
}

// `node tools/bench/client-overhead.mjs`: these rows alone (build first).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const row of await clientOverhead()) console.log(`${row.metric}: ${row.value}`);
}
