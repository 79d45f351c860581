// The TypeScript client's per-call overhead, side by side in-process (a stub fetch: what the kit
// costs) and over loopback HTTP (what a caller sees, wall time): the client with the token manager
// (as its README shows it: default clock and storage) against openapi-fetch with the bearer header
// set once on the client (as openapi-fetch's README shows it), for a GET and a 1 KB JSON POST; and,
// for reference, the client with a static token, the client with a timeout against openapi-fetch
// with a timeout signal, and raw fetch.
//
// The method (issue 20: every contender in one isolate one after the other printed +25.6 % where
// the true figure was +3.6 %; issue 28: the baseline merged a header into every call and the kit
// used a static token, flattering the kit): one process on the load core (overhead-run.mjs) holds
// each contender in a worker thread of its own (overhead-worker.mjs: a V8 isolate of its own, so no
// contender inherits another's JIT state or garbage); after a warm-up, every round runs every
// contender once, in a new random order, the others waiting; a comparison is the median of the
// rounds' own ratios (stats.mjs `paired`), printed with the middle half and the range of those
// ratios. The two sides of a pair run milliseconds apart, so a neighbour's burst hits both. The
// loopback server runs in its own process on the other core (pinning.mjs).
// `node client-overhead.mjs [--quick]` prints these rows alone (build first).
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { placement, runJson, startServerProcess } from "./pinning.mjs";
import { QUICK, formatOverhead, paired } from "./stats.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const CONTENDERS = [
  "raw",
  "bare",
  "bareAgain",
  "bareTimeout",
  "barePost",
  "tenant",
  "tenantStatic",
  "tenantTimeout",
  "tenantPost",
];
const GOAL_PCT = 10;
const ROUNDS = { stub: QUICK ? 5 : 41, loopback: QUICK ? 5 : 31 };
const CALLS = { stub: QUICK ? 300 : 2_000, loopback: QUICK ? 50 : 300 };
const WARMUP = { stub: QUICK ? 1_000 : 5_000, loopback: QUICK ? 100 : 500 };

/** `count` rounds of every contender, in one process on the load core; each contender's µs/call per round. */
function rounds(mode, url, count, calls, warmup) {
  return runJson([
    join(here, "overhead-run.mjs"),
    mode,
    url,
    String(count),
    String(calls),
    String(warmup),
    ...CONTENDERS,
  ]);
}

function rows(label, times, withGoal) {
  const row = (metric, a, b, goal) => {
    const c = paired(times[a], times[b]);
    return {
      metric: `${metric} (${label})`,
      value: formatOverhead(c),
      goal: goal ? `≤ ${GOAL_PCT} %` : "",
      met: goal ? (c.ratio - 1) * 100 <= GOAL_PCT : null,
    };
  };
  return [
    row("client with the token manager vs openapi-fetch with the header set once, GET", "tenant", "bare", withGoal),
    row(
      "client with the token manager vs openapi-fetch with the header set once, POST of 1 KB JSON",
      "tenantPost",
      "barePost",
      false,
    ),
    row(
      "client with a static token (no token manager) vs openapi-fetch with the header set once, GET",
      "tenantStatic",
      "bare",
      false,
    ),
    row(
      "client with the token manager and timeoutAfter(30 s) vs openapi-fetch with the header set once and AbortSignal.timeout(30 s)",
      "tenantTimeout",
      "bareTimeout",
      false,
    ),
    row("client with the token manager vs raw fetch, GET", "tenant", "raw", false),
    // A/A: two workers running the same openapi-fetch client; a spread wider than the others' says
    // the machine, not the code, moved the figures
    row("openapi-fetch vs itself in another worker, GET (A/A: the method's own noise)", "bareAgain", "bare", false),
  ];
}

/** How the rows were measured, for BENCHMARKS.md. */
export const clientOverheadMethod = `Contenders: \`createTenantClient({ baseUrl, auth: tokenManager })\`, the token manager with its default clock and storage, signed in before timing (its token endpoint a stub), against openapi-fetch's \`createClient({ baseUrl, headers: { Authorization } })\` (the header set once, as openapi-fetch's README shows). One process on the load core (\`overhead-run.mjs\`, taskset) holds each contender in a worker thread of its own (\`overhead-worker.mjs\`: a V8 isolate of its own, so no contender shares another's JIT state or heap); each makes one call that must succeed and ${WARMUP.stub.toLocaleString("en")} (in-process) or ${WARMUP.loopback} (loopback) calls of warm-up; then ${ROUNDS.stub} (in-process) or ${ROUNDS.loopback} (loopback) rounds, in each every contender in a new random order makes ${CALLS.stub.toLocaleString("en")} or ${CALLS.loopback} calls one after the other while the others wait. A row is the median of the rounds' own ratios, with their middle half and range; the A/A row (openapi-fetch against itself in another worker) shows what the method reports for no difference on that machine. In-process: a stub \`fetch\` answering a 3-field user JSON. Loopback: \`server-process.mjs json\` (node:http) on the server core. Rerun: \`node tools/bench/client-overhead.mjs\` after \`pnpm build\`.`;

export async function clientOverhead() {
  const stub = await rounds("stub", "https://acme.tenant.test", ROUNDS.stub, CALLS.stub, WARMUP.stub);
  const server = await startServerProcess("json");
  try {
    const loopback = await rounds("loopback", server.url, ROUNDS.loopback, CALLS.loopback, WARMUP.loopback);
    return [
      ...rows(
        `in-process: stub fetch, a worker thread per contender, ${ROUNDS.stub} shuffled rounds of ${CALLS.stub} calls`,
        stub,
        true,
      ),
      ...rows(
        `loopback HTTP, wall time, a worker thread per contender, ${placement}, ${ROUNDS.loopback} shuffled rounds of ${CALLS.loopback} calls`,
        loopback,
        false,
      ),
    ];
  } finally {
    server.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const row of await clientOverhead())
    console.log(`${row.metric}: ${row.value}${row.goal ? ` (goal ${row.goal}: ${row.met ? "met" : "MISSED"})` : ""}`);
}
