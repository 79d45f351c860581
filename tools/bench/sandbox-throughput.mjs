// The sandbox against a bare node:http server on GET /api/v1/auth/user, each in its own process
// (server-process.mjs; the sandbox as its CLI runs it), both started once on the server core and
// loaded in turn by autocannon in a process of its own on the load core (pinning.mjs), in paired
// rounds of random order after a warm-up of each:
//
// - requests per second at saturation (as fast as each answers);
// - server CPU time per request at one fixed rate for both, below either's capacity. Measured at
//   saturation (the former method, issue 28: 1.66× where 1.9× was found), CPU per request is only
//   the inverse of each server's own throughput, and a saturated server amortises its event-loop
//   wake-ups over more requests per turn than the other; at one fixed rate both do the same work per
//   second. The CPU time is the server's own process.cpuUsage() (µs; all its threads), read before
//   the load and again after a settle of SETTLE_MS, so garbage collected just after the load is
//   counted.
//
// A row is the median of the rounds' ratios with their middle half and range, beside its A/A: a
// second bare server, loaded in the same rounds, against the first (stats.mjs).
// Loopback only, bounded in time. `node sandbox-throughput.mjs [--quick]` prints these rows alone.
import { setTimeout as sleep } from "node:timers/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { placement, runJson, startServerProcess } from "./pinning.mjs";
import { rowLine } from "./report.mjs";
import { QUICK, formatSpread, formatTimes, judgedRow, median, paired, shuffled } from "./stats.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const ROUNDS = QUICK ? 2 : 7;
const SECONDS = QUICK ? 1 : 3;
const SETTLE_MS = 500;
/** The fixed rate of the CPU rounds, as a share of the sandbox's rate at saturation. */
const RATE_SHARE = 0.5;
/** How far below the fixed rate a CPU round's achieved rate may fall for the round to count (a starved server). */
const RATE_TOLERANCE = 0.05;

/** How the rows were measured, for BENCHMARKS.md. */
export const sandboxMethod = `Servers: the sandbox as its CLI runs it (\`startSandbox({ fastGlobals: true })\`, a signed-in token) and a bare node:http server answering the same user JSON after checking the bearer header (\`server-process.mjs\`), each in its own process on the server core; autocannon (32 connections, \`load-worker.mjs\`) in a process of its own on the load core (taskset). A second bare server in a process of its own is the A/A: loaded in the same rounds, against the first. A warm-up of 2 s each, then ${ROUNDS} rounds of ${SECONDS} s at saturation, each round loading the three in a random order (requests per second, median of the rounds' ratios with middle half and range; goal: the sandbox at least 50 % of bare, met when the whole middle half lies at or above 50 %); then ${ROUNDS} rounds at one fixed rate for all three, ${RATE_SHARE * 100} % of the sandbox's median rate at saturation, reading each server's own \`process.cpuUsage()\` before the load and ${SETTLE_MS} ms after it (CPU µs per request, median of the rounds' ratios). A round in which either server's achieved rate falls more than 5 % below the target (a starved server) is dropped (up to twice as many attempts as rounds; the row fails if fewer rounds are kept). Rerun: \`node tools/bench/sandbox-throughput.mjs\`.`;

/** Loads a server for `seconds` (at `rate` req/s if given): its requests per second and CPU µs per request. */
async function load(server, seconds, rate) {
  const before = await server.cpuMicros();
  const { rps, total } = await runJson([
    join(here, "load-worker.mjs"),
    server.url,
    server.token,
    String(seconds),
    ...(rate ? [String(rate)] : []),
  ]);
  await sleep(SETTLE_MS);
  const after = await server.cpuMicros();
  return { rps, cpuPerRequest: (after - before) / total };
}

export async function sandboxThroughput() {
  // bareAgain: the A/A, a second bare server loaded in the same rounds as the first
  const servers = {
    bare: await startServerProcess("bare"),
    bareAgain: await startServerProcess("bare"),
    sandbox: await startServerProcess("sandbox"),
  };
  const names = Object.keys(servers);
  try {
    // warm-up, so the JIT has compiled both servers' hot paths before anything is counted
    for (const server of Object.values(servers)) await load(server, 2);
    const rps = { bare: [], bareAgain: [], sandbox: [] };
    for (let r = 0; r < ROUNDS; r++) {
      for (const name of shuffled(names)) rps[name].push((await load(servers[name], SECONDS)).rps);
    }
    const rate = Math.round(median(rps.sandbox) * RATE_SHARE);
    // A round counts only when both servers kept the rate (a busy machine can starve one): up to
    // twice ROUNDS attempts, and the row fails with fewer than ROUNDS rounds kept.
    const cpu = { bare: [], bareAgain: [], sandbox: [] };
    const misses = [];
    for (let attempt = 0; attempt < 2 * ROUNDS && cpu.bare.length < ROUNDS; attempt++) {
      const round = {};
      for (const name of shuffled(names)) round[name] = await load(servers[name], SECONDS, rate);
      const missed = Object.entries(round).filter(([, result]) => result.rps < rate * (1 - RATE_TOLERANCE));
      if (missed.length > 0) {
        misses.push(missed.map(([name, result]) => `${name} ${Math.round(result.rps)}`).join(", "));
        continue;
      }
      for (const name of names) cpu[name].push(round[name].cpuPerRequest);
    }
    if (cpu.bare.length < ROUNDS) {
      throw new Error(
        `only ${cpu.bare.length} of ${ROUNDS} rounds kept ${rate} req/s (less than ${RATE_TOLERANCE * 100} % below) (answered: ${misses.join("; ")} req/s): the machine is too busy for this row`,
      );
    }
    const throughput = paired(rps.sandbox, rps.bare);
    const pct = (x) => `${(x * 100).toFixed(0)} %`;
    const cpuRatio = paired(cpu.sandbox, cpu.bare);
    return [
      judgedRow({
        metric: `sandbox GET /api/v1/auth/user vs bare node:http, requests per second at saturation (autocannon, 32 connections, ${placement}, ${ROUNDS} shuffled rounds of ${SECONDS} s)`,
        value: `${Math.round(throughput.a)} vs ${Math.round(throughput.b)} req/s: ${pct(throughput.ratio)} (${throughput.rounds} paired rounds: ${formatSpread(throughput, "percent")})`,
        c: throughput,
        aa: paired(rps.bareAgain, rps.bare),
        aaLabel: "a second bare server against the first",
        style: "percent",
        goal: { atLeast: 0.5 },
        goalText: "≥ 50 % of bare",
      }),
      judgedRow({
        metric: `sandbox server CPU time per GET /api/v1/auth/user vs bare node:http, both at ${rate} req/s (${RATE_SHARE * 100} % of the sandbox's rate at saturation; the servers' own process.cpuUsage(), ${ROUNDS} shuffled rounds of ${SECONDS} s)`,
        value: formatTimes(cpuRatio, "µs/request"),
        c: cpuRatio,
        aa: paired(cpu.bareAgain, cpu.bare),
        aaLabel: "a second bare server against the first",
        style: "times",
      }),
    ];
  } finally {
    for (const server of Object.values(servers)) server.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const row of await sandboxThroughput()) console.log(rowLine(row));
}
