// Requests per second on GET /api/v1/auth/user: the sandbox against a bare node:http server, each
// in its own process (server-process.mjs; the sandbox as its CLI runs it), both started once on the
// server core, loaded in turn by autocannon in a process of its own on the load core (pinning.mjs),
// in paired rounds of random order after a warm-up of each. The figure is the median over rounds of
// each round's ratio, with the spread of the rounds. Where /proc is readable (Linux) it also gives
// the server's CPU time per request, which other jobs on a busy machine disturb far less than the
// requests per second. Loopback only, bounded in time.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { median, placement, runJson, shuffled, startServerProcess } from "./pinning.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const ROUNDS = 5;
const SECONDS = 3;

/** CPU time (user + system) of a process so far, in µs, or `undefined` without /proc. */
function cpuMicros(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    // utime and stime, in clock ticks of 10 ms (USER_HZ is 100 on Linux)
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return undefined;
  }
}

/** Loads a server for `seconds`: its requests per second and, where readable, its CPU µs per request. */
async function load({ url, token, pid }, seconds) {
  const before = cpuMicros(pid);
  const { rps, total } = await runJson([join(here, "load-worker.mjs"), url, token, String(seconds)]);
  const after = cpuMicros(pid);
  return { rps, cpuPerRequest: before === undefined || after === undefined ? undefined : (after - before) / total };
}

export async function sandboxThroughput() {
  const servers = { bare: await startServerProcess("bare"), sandbox: await startServerProcess("sandbox") };
  try {
    // warm-up, so the JIT has compiled both servers' hot paths before anything is counted
    for (const server of Object.values(servers)) await load(server, 2);
    const rps = { bare: [], sandbox: [] };
    const cpu = { bare: [], sandbox: [] };
    for (let r = 0; r < ROUNDS; r++) {
      for (const name of shuffled(["bare", "sandbox"])) {
        const result = await load(servers[name], SECONDS);
        rps[name].push(result.rps);
        cpu[name].push(result.cpuPerRequest);
      }
    }
    const ratios = rps.sandbox.map((s, i) => s / rps.bare[i]);
    const ratio = median(ratios);
    const pct = (x) => `${(x * 100).toFixed(0)} %`;
    const cpuRows = cpu.sandbox.includes(undefined)
      ? []
      : [
          {
            metric: `sandbox server CPU time per GET /api/v1/auth/user vs bare node:http (same rounds)`,
            value: `${median(cpu.sandbox).toFixed(1)} vs ${median(cpu.bare).toFixed(1)} µs/request (${median(cpu.sandbox.map((c, i) => c / cpu.bare[i])).toFixed(2)}×)`,
            goal: "",
            met: null,
          },
        ];
    return [
      {
        metric: `sandbox GET /api/v1/auth/user vs bare node:http (autocannon, 32 connections, ${placement}, median of ${ROUNDS} shuffled rounds of ${SECONDS} s)`,
        value: `${Math.round(median(rps.sandbox))} vs ${Math.round(median(rps.bare))} req/s (${pct(ratio)}; rounds from ${pct(Math.min(...ratios))} to ${pct(Math.max(...ratios))})`,
        goal: "≥ 50 % of bare",
        met: ratio >= 0.5,
      },
      ...cpuRows,
    ];
  } finally {
    for (const server of Object.values(servers)) server.stop();
  }
}

// `node tools/bench/sandbox-throughput.mjs`: this row alone (build first).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const row of await sandboxThroughput()) console.log(`${row.metric}: ${row.value}`);
}
