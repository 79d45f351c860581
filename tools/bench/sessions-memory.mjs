// A server acting for many users, in one process (issue 39), in TypeScript, Python and Go: the
// memory each cached session costs and what is left of one once dropped as idle (goals: ≤ 4 KiB per
// cached session in TypeScript and Go, ≤ 8 KiB in Python), and a request for a user through the
// kit's sessions object against building that user's manager by hand, as a server without it would.
//
// TypeScript: this file run as a worker (`--worker`, in a child with --expose-gc): `createSessions`
// and `sessionClient` on a memoryStorage, the tenant an in-memory stub fetch. Python:
// sessions-memory.py (sync `Sessions`, one shared transport as the kit does, httpx.MockTransport).
// Go: go.mjs goSessions (packages/go/internal/cmd/bench/sessions.go). `node sessions-memory.mjs
// [--quick]` prints every kit's rows.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureVenv } from "@tenant-integration/python-venv";
import { rowLine, settle } from "./report.mjs";
import { CALLS, SESSIONS, clientRow, memoryRows } from "./sessions-rows.mjs";
import { QUICK, shuffled } from "./stats.mjs";

const here = dirname(fileURLToPath(import.meta.url));
/** Memory rounds (after an untimed one), and paired rounds of calls for the client rows. */
const MEMORY_ROUNDS = QUICK ? 2 : 5;
const CLIENT_ROUNDS = QUICK ? 3 : 21;
const BASE_URL = "https://acme.tenant.test";
const REDIRECT = "https://app.example.org/callback";
const USER = JSON.stringify({ id: 42, name: "Bench User" });

/** How the rows are measured, written under the table in BENCHMARKS.md (bench.mjs reads it). */
export const sessionsMemoryMethod = `Memory per session: in one process, a storage in memory holding ${SESSIONS.toLocaleString("en")} signed-in sessions (signed in through a sessions object that is then dropped); a new sessions object on it, then every session makes one request for the user through its API client (its manager made and cached, its tokens read); the memory the sessions object added, per session, while all ${SESSIONS.toLocaleString("en")} are cached, and what is left per session once every manager was dropped as idle (idle for 2 s in TypeScript; in Python the sessions module's monotonic clock is moved past \`max_idle\` instead of waiting: a busy machine stretches any wait); one untimed round, then ${MEMORY_ROUNDS} rounds, a fresh storage and sessions object each; the median with the middle half and range (a figure, no comparison: no A/A; the goal is met when the middle half lies under it). TypeScript: \`createSessions\` and \`sessionClient\` (one openapi-fetch client for every session, a cached session keeping only its token for it), \`memoryStorage\`, a stub fetch answering the token endpoint and the user, in a child process with \`--expose-gc\`: \`process.memoryUsage().heapUsed\` after two full collections. Python: sync \`Sessions\` and \`Sessions.client(id)\` sharing one \`httpx.MockTransport\` (one HTTP client for every session, as the kit does), \`MemoryStorage\`: Python's allocations traced by \`tracemalloc\` (started before the sessions object), after \`gc.collect()\`; the Python sessions object drops idle managers when another is asked for, so one more manager is asked for (and counted) before the dropped figure. Go: \`tokenmanager.Sessions\` with \`Client(id)\` on a memory storage and a RoundTripper answering a prebuilt response (packages/go/internal/cmd/bench/sessions.go): the live heap after two collections, 5 rounds; its client row in 21 paired rounds of 500 calls on the process's CPU time with GOMAXPROCS 1, a second \`Sessions\` as its A/A (the "Go SDK" method below says more). A request for a user: the user changing at each call over the ${SESSIONS.toLocaleString("en")} sessions, the session's client from the sessions object and a GET of /api/v1/auth/user, against a manager built by hand for that user (TypeScript: \`createSessionManager\` with \`sessionId\` and a \`createTenantClient\` on it; Python: \`TokenManager(session_id=…)\` on the shared transport and a \`Client\` on the shared httpx client), on the same storage and stub; A/A: a second sessions object against the first; ${CLIENT_ROUNDS} paired rounds of ${CALLS} calls per contender in a new random order each, timed in the process's CPU time, after one untimed round; the median of the rounds' ratios with their middle half and range. Rerun: \`node tools/bench/sessions-memory.mjs [--quick]\` after \`pnpm build\` (Python's alone: \`.venv/bin/python tools/bench/sessions-memory.py 1000 5 21 500\`; Go's: \`go run ./internal/cmd/bench -row sessions\` in packages/go).`;

// -- the TypeScript worker --------------------------------------------------------------------------

/** The tenant as a stub fetch: new tokens at each token request, the user at the API. */
function stubTenant() {
  let issued = 0;
  return async (input) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    if (url.endsWith("/oauth/token")) {
      issued++;
      return new Response(
        JSON.stringify({
          access_token: `at_bench_${String(issued).padStart(20, "0")}`,
          refresh_token: `rt_bench_${String(issued).padStart(20, "0")}`,
          token_type: "Bearer",
          expires_in: 3600,
          scope: "profile:read",
        }),
        { status: 200, headers: { "content-type": "application/json" } },
      );
    }
    return new Response(USER, { status: 200, headers: { "content-type": "application/json" } });
  };
}

/** The id of session i: an e-mail address, as many apps' user ids are. */
const sessionId = (i) => `user${String(i).padStart(6, "0")}@example.org`;

async function worker() {
  const { createSessionManager, createSessions, memoryStorage } = await import("@tenant-integration/token-manager");
  const { createTenantClient, sessionClient } = await import("@tenant-integration/client");
  const fetch = stubTenant();
  const options = { baseUrl: BASE_URL, clientId: "bench", redirectUri: REDIRECT, scopes: ["profile:read"], fetch };
  /** The API client's options: one object, so that a session's client is cached with its manager. */
  const api = { fetch };

  /** A memory storage holding `n` signed-in sessions. */
  async function signedInStorage(n) {
    const storage = memoryStorage();
    const sessions = createSessions({ ...options, storage });
    for (let i = 0; i < n; i++) {
      const { url, browser } = await sessions.beginSignIn({ session: sessionId(i) });
      const state = new URL(url).searchParams.get("state");
      await sessions.completeSignIn(`${REDIRECT}?code=bench&state=${state}`, { browser });
    }
    return storage;
  }

  const heap = () => {
    globalThis.gc();
    globalThis.gc();
    return process.memoryUsage().heapUsed;
  };
  const get = async (client) => {
    const { response } = await client.GET("/api/v1/auth/user");
    if (response.status !== 200) throw new Error(`status ${response.status}`);
  };

  /** One memory round: bytes per cached session and per dropped one. */
  async function memoryRound() {
    const storage = await signedInStorage(SESSIONS);
    const maxIdleMs = 2000;
    const sessions = createSessions({ ...options, storage, maxIdleMs });
    const base = heap();
    for (let i = 0; i < SESSIONS; i++) await get(sessionClient(sessions, sessionId(i), api));
    const cached = (heap() - base) / SESSIONS;
    // The idle sweep runs maxIdleMs after the first session was cached: none was dropped if all are.
    if (sessions.cached !== SESSIONS)
      throw new Error(`the sessions were dropped while they were measured (${sessions.cached} cached)`);
    while (sessions.cached > 0) await new Promise((resolve) => setTimeout(resolve, 100));
    const dropped = (heap() - base) / SESSIONS;
    return { cached, dropped, keep: [storage, sessions] };
  }

  const memory = { cached: [], dropped: [] };
  for (let round = 0; round <= MEMORY_ROUNDS; round++) {
    const { cached, dropped } = await memoryRound();
    if (round === 0) continue;
    memory.cached.push(cached);
    memory.dropped.push(dropped);
  }

  // A request for a user, three contenders on one storage of signed-in sessions.
  const storage = await signedInStorage(SESSIONS);
  const sessions = createSessions({ ...options, storage });
  const sessionsAgain = createSessions({ ...options, storage });
  let next = 0;
  const contenders = {
    sessions: () => get(sessionClient(sessions, sessionId(next % SESSIONS), api)),
    sessionsAgain: () => get(sessionClient(sessionsAgain, sessionId(next % SESSIONS), api)),
    byHand: () => {
      const manager = createSessionManager({ ...options, storage, sessionId: sessionId(next % SESSIONS) });
      return get(createTenantClient({ baseUrl: BASE_URL, auth: manager, fetch }));
    },
  };
  const perCall = async (name) => {
    const start = process.cpuUsage();
    for (let i = 0; i < CALLS; i++, next++) await contenders[name]();
    const used = process.cpuUsage(start);
    return (used.user + used.system) / CALLS;
  };
  const times = { sessions: [], sessionsAgain: [], byHand: [] };
  // The untimed round caches every session's manager in both sessions objects.
  for (const name of Object.keys(contenders)) for (let i = 0; i < SESSIONS / CALLS; i++) await perCall(name);
  for (let round = 0; round < CLIENT_ROUNDS; round++)
    for (const name of shuffled(Object.keys(contenders))) times[name].push(await perCall(name));
  process.stdout.write(`${JSON.stringify({ memory, times })}\n`);
}

// -- the rows ---------------------------------------------------------------------------------------

/** The TypeScript rows, from a worker process with --expose-gc. */
export function typescriptSessions() {
  const run = spawnSync(process.execPath, ["--expose-gc", fileURLToPath(import.meta.url), "--worker"], {
    encoding: "utf8",
    maxBuffer: 1 << 24,
    env: { ...process.env, ...(QUICK ? { BENCH_QUICK: "1" } : {}) },
  });
  if (run.status !== 0) throw new Error(`sessions-memory.mjs --worker: ${run.stderr.trim().split("\n").at(-1)}`);
  const { memory, times } = JSON.parse(run.stdout);
  return [
    ...memoryRows("TypeScript", memory, 4, "V8 heap used after two full collections, createSessions + sessionClient"),
    clientRow("TypeScript", times, {
      sessionsCall: "sessionClient(sessions, id)",
      byHandCall: "createSessionManager({ sessionId }) with createTenantClient",
    }),
  ];
}

/** The Python rows, from sessions-memory.py in the repository's venv. */
export async function pythonSessions() {
  const python = await ensureVenv();
  const run = spawnSync(
    python,
    [join(here, "sessions-memory.py"), String(SESSIONS), String(MEMORY_ROUNDS), String(CLIENT_ROUNDS), String(CALLS)],
    { encoding: "utf8", maxBuffer: 1 << 24 },
  );
  if (run.status !== 0) throw new Error(`sessions-memory.py: ${run.stderr.trim().split("\n").at(-1)}`);
  const { memory, times } = JSON.parse(run.stdout);
  return [
    ...memoryRows(
      "Python",
      memory,
      8,
      "tracemalloc after gc.collect(), sync Sessions + Sessions.client, one shared transport",
    ),
    clientRow("Python", times, {
      sessionsCall: "Sessions.client(id)",
      byHandCall: "TokenManager(session_id=…) with a Client",
    }),
  ];
}

/** Go's rows (go.mjs goSessions: its client row prints per-round ratios, judged by report.mjs with its A/A). */
export async function goSessionRows() {
  const { goSessions } = await import("./go.mjs");
  return goSessions();
}

/** Every kit's rows; a kit whose piece failed gets a failed row saying why, and the others are still measured. */
export async function sessionsMemory() {
  const rows = [];
  for (const [kit, rowsOf] of [
    ["TypeScript", async () => typescriptSessions()],
    ["Python", pythonSessions],
    ["Go", goSessionRows],
  ]) {
    try {
      rows.push(...(await rowsOf()));
    } catch (error) {
      rows.push({
        metric: `${kit} memory per session and a session's client`,
        value: `failed: ${error instanceof Error ? error.message.split("\n")[0] : error}`,
        goal: "",
        met: false,
        failed: true,
      });
    }
  }
  return rows;
}

if (process.argv.includes("--worker")) await worker();
else if (process.argv[1] === fileURLToPath(import.meta.url))
  for (const row of settle(await sessionsMemory())) console.log(rowLine(row));
