// The TypeScript client's per-call overhead, side by side in-process (a stub fetch: what the kit
// costs) and over loopback HTTP (what a caller sees, wall time): the client with the token manager
// (as its README shows it: default clock and storage) against openapi-fetch with the bearer header
// set once on the client (as openapi-fetch's README shows it), for a GET and a 1 KB JSON POST; and,
// for reference, the client with a static token, the client with a timeout against openapi-fetch
// with a timeout signal, and raw fetch; and where the overhead goes, step by step: openapi-fetch
// with a middleware that only sets the header, then the client on a static token, then the manager.
//
// The method (issue 20: every contender in one isolate one after the other printed +25.6 % where
// the true figure was +3.6 %; issue 28: the baseline merged a header into every call and the kit
// used a static token, flattering the kit): one process on the load core (overhead-run.mjs) holds
// each contender in a worker thread of its own (overhead-worker.mjs: a V8 isolate of its own, so no
// contender inherits another's JIT state or garbage); after a warm-up, every round runs every
// contender in turns, each turn in a new random order, the others waiting; a comparison is the
// median of the rounds' own ratios (stats.mjs `paired`), printed with the middle half and the range
// of those ratios. The loopback server runs in its own process on the other core (pinning.mjs).
//
// Noise (issue 28: the A/A row, openapi-fetch against itself, printed −6.7 % with a middle half
// of ±10 %, as wide as the goal): on a machine whose cores other programs share, a round's wall time
// holds whatever time those programs took the core. So the in-process rows are timed by the
// process's CPU time (user + system: only the time this process ran; the idle contenders' workers
// add nothing), and each round is cut into turns, so that a contender's figure for the round is
// spread over the whole round instead of one stretch of it. And each in-process contender runs in
// three isolates, not one: two isolates running the same code settle on machine code a few per cent
// apart for the whole run (measured: four workers of the same openapi-fetch client, 17.2 to 18.3
// µs/call), as large as the overhead being measured. The loopback rows stay in wall time, one
// isolate each: there the waiting is what a caller sees, and a few tenths of a µs are lost in it.
// `node client-overhead.mjs [--quick]` prints these rows alone (build first).
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { placement, runJson, startServerProcess } from "./pinning.mjs";
import { rowLine } from "./report.mjs";
import { QUICK, formatOverhead, judgedRow, paired } from "./stats.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const CONTENDERS = [
  "raw",
  "bare",
  "bareAgain",
  "bareMiddleware",
  "bareTimeout",
  "barePost",
  "tenant",
  "tenantStatic",
  "tenantTimeout",
  "tenantPost",
];
const GOAL_PCT = 10;
const ROUNDS = { stub: QUICK ? 5 : 41, loopback: QUICK ? 5 : 31 };
const CALLS = { stub: QUICK ? 300 : 5_000, loopback: QUICK ? 50 : 300 };
/** How many turns a round is cut into (overhead-run.mjs): each contender's calls of a round, spread over it. */
const TURNS = { stub: QUICK ? 2 : 10, loopback: QUICK ? 1 : 3 };
const WARMUP = { stub: QUICK ? 1_000 : 20_000, loopback: QUICK ? 100 : 500 };
/** How many isolates (worker threads) run each contender (overhead-run.mjs): their bias averages out. */
const ISOLATES = { stub: QUICK ? 1 : 3, loopback: 1 };
/** "3 worker threads per contender", "a worker thread per contender": for the rows' labels. */
const threads = (n) => (n === 1 ? "a worker thread per contender" : `${n} worker threads per contender`);

/** "10 shuffled turns", "1 turn": how a round is cut, for the rows' labels. */
const turns = (n) => (n === 1 ? "1 turn" : `${n} shuffled turns`);

/**
 * `count` rounds of every contender, in one process on the load core: each contender's µs/call per
 * round, by the wall clock (`wall`) and by the process's CPU time (`cpu`).
 */
function rounds(mode, url, count, calls, turns, isolates, warmup) {
  return runJson([
    join(here, "overhead-run.mjs"),
    mode,
    url,
    String(count),
    String(calls),
    String(warmup),
    String(turns),
    String(isolates),
    ...CONTENDERS,
  ]);
}

function rows(label, times, withGoal) {
  // The A/A beside every row (stats.mjs): openapi-fetch against itself in other workers, same rounds
  const aa = paired(times.bareAgain, times.bare);
  const row = (metric, a, b, goal) => {
    const c = paired(times[a], times[b]);
    return judgedRow({
      metric: `${metric} (${label})`,
      value: formatOverhead(c),
      c,
      aa,
      aaLabel: "openapi-fetch against itself in another worker",
      style: "overhead",
      goal: goal ? { atMost: 1 + GOAL_PCT / 100 } : undefined,
      goalText: `≤ ${GOAL_PCT} %`,
    });
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
    // Where the overhead goes, step by step: openapi-fetch's middleware mechanism alone (a middleware
    // that only sets the header), then the client on a static token against it, then the token manager
    row(
      "openapi-fetch with a middleware that sets the header vs with the header set once, GET (the middleware mechanism alone)",
      "bareMiddleware",
      "bare",
      false,
    ),
    row(
      "client with a static token vs openapi-fetch with a middleware that sets the header, GET (the client's own middleware and error mapping)",
      "tenantStatic",
      "bareMiddleware",
      false,
    ),
    row(
      "client with the token manager vs with a static token, GET (the token manager's getAccessToken per call)",
      "tenant",
      "tenantStatic",
      false,
    ),
    // A/A: two workers running the same openapi-fetch client; a spread wider than the others' says
    // the machine, not the code, moved the figures
    {
      metric: `openapi-fetch vs itself in another worker, GET (A/A: the method's own noise) (${label})`,
      value: formatOverhead(aa),
      goal: "",
      met: null,
    },
  ];
}

/** How the rows were measured, for BENCHMARKS.md. */
export const clientOverheadMethod = `Contenders: \`createTenantClient({ baseUrl, auth: tokenManager })\`, the token manager with its default clock and storage, signed in before timing (its token endpoint a stub), against openapi-fetch's \`createClient({ baseUrl, headers: { Authorization } })\` (the header set once, as openapi-fetch's README shows). One process on the load core (\`overhead-run.mjs\`, taskset) holds each contender in worker threads of its own (\`overhead-worker.mjs\`: each a V8 isolate of its own, so no contender shares another's JIT state or heap), ${ISOLATES.stub} per contender in-process (isolates running the same code settle on machine code a few per cent apart; their mean cancels that) and ${ISOLATES.loopback} over loopback; each worker makes one call that must succeed and ${WARMUP.stub.toLocaleString("en")} (in-process) or ${WARMUP.loopback} (loopback) calls of warm-up; then ${ROUNDS.stub} (in-process) or ${ROUNDS.loopback} (loopback) rounds of ${CALLS.stub.toLocaleString("en")} or ${CALLS.loopback} calls per contender, each round cut into ${TURNS.stub} or ${TURNS.loopback} turns in which every worker, in a new random order, makes its share of its contender's calls one after the other while the others wait. In-process figures are the process's CPU time (user + system), which leaves out the time other programs held the core; loopback figures are wall time, what a caller waits. Three rows split the overhead step by step: openapi-fetch with a middleware that only sets the header (\`client.use({ onRequest })\`: openapi-fetch's middleware mechanism alone), the client on \`staticToken\` against that, and the client with the token manager against the client on a static token. A row is the median of the rounds' own ratios, with their middle half and range, and beside it the A/A: openapi-fetch against itself in other workers (as many isolates as every contender), in the same rounds and turns, which shows what the method reports for no difference on that machine (also a row of its own). The goal (in-process GET ≤ 10 %) is met when the middle half lies under +10 %, and is noise when the A/A's middle half is wider than the distance from the median to +10 %. In-process: a stub \`fetch\` answering a 3-field user JSON. Loopback: \`server-process.mjs json\` (node:http) on the server core. Rerun: \`node tools/bench/client-overhead.mjs\` after \`pnpm build\`.`;

export async function clientOverhead() {
  const stub = await rounds(
    "stub",
    "https://acme.tenant.test",
    ROUNDS.stub,
    CALLS.stub,
    TURNS.stub,
    ISOLATES.stub,
    WARMUP.stub,
  );
  const server = await startServerProcess("json");
  try {
    const loopback = await rounds(
      "loopback",
      server.url,
      ROUNDS.loopback,
      CALLS.loopback,
      TURNS.loopback,
      ISOLATES.loopback,
      WARMUP.loopback,
    );
    return [
      ...rows(
        `in-process: stub fetch, CPU time, ${threads(ISOLATES.stub)}, ${ROUNDS.stub} rounds of ${CALLS.stub} calls in ${turns(TURNS.stub)}`,
        stub.cpu,
        true,
      ),
      ...rows(
        `loopback HTTP, wall time, ${threads(ISOLATES.loopback)}, ${placement}, ${ROUNDS.loopback} rounds of ${CALLS.loopback} calls in ${turns(TURNS.loopback)}`,
        loopback.wall,
        false,
      ),
    ];
  } finally {
    server.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const row of await clientOverhead()) console.log(rowLine(row));
}
