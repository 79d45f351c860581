#!/usr/bin/env node
// One member of a fleet: a Node process with its own Redis connection, its own `redisStorage` and
// its own token manager, all from the BUILT packages (as an app installs them). Driven over
// stdin/stdout with one JSON object per line, so a test (test/fleet.test.ts) or the benchmark
// (tools/bench/redis-fleet.mjs) can release many of them at the same instant.
//
// Environment: REDIS_URL, TENANT_URL, CLIENT_ID, REDIRECT_URI, PREFIX; CLOCK_OFFSET_MS (the
// test clock's offset at start, default 0); optional LEASE_MS, REQUEST_TIMEOUT_MS, INTENT_WAIT_MS
// (the manager's), and NO_OFFLINE_QUEUE=1 (commands fail at once while Redis is down instead of
// waiting for the reconnection);
// VICTIM (optional), what happens to this process's first refresh:
//   before         its request hangs before it is sent (the test kills the process)
//   after          the tenant answered, the manager never sees the answer (the test kills the process)
//   pause          it stops itself (SIGSTOP) just before the request leaves, after the last checks
//   pause-intent   it stops itself after taking the lock and deciding to refresh, before the intent
//                  and the ownership checks (the first of the three pause points of issue 21)
//   pause-in-flight  it stops itself with the request sent and answered by the tenant, the answer
//                  not yet read by the manager, whose request timer runs (the second)
//   pause-answered it stops itself with the answer read, just before the manager writes it (the third)
//   hold-answer    the answer is held from the manager until the process gets SIGUSR2 (the test
//                  kills Redis meanwhile)
//   announce       it prints {"tokenRequest":true} as the request leaves, and sends it (the test
//                  stops the process from outside while it waits for the answer)
// The test sends SIGCONT.
//
// In:  {"go": <clock offset ms>}   move this process's clock, then get a token and the user
//      {"again": true}             get a token and the user again (no clock change)
//      {"exit": true}
// Out: {"ready": true} once warmed up (a token and the user fetched), then one {"result": …} per command;
//      {"tokenRequest": true} / {"tokenResponse": <status>} / {"paused": <where>} in VICTIM mode, {"leaseLost": "LEASE_LOST"}
//      when its lock lease was lost under a refresh. Never a token.
import { createInterface } from "node:readline";
import { createClient } from "redis";
import { createTokenManager } from "@tenant-integration/token-manager";
import { redisStorage } from "@tenant-integration/token-store-redis";

const env = process.env;
const say = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
const forever = () => new Promise(() => {});

let offsetMs = Number(env.CLOCK_OFFSET_MS ?? 0);
let victim = env.VICTIM;
const stop = (where) => {
  say({ paused: where });
  process.kill(process.pid, "SIGSTOP"); // frozen here, timers and all, until SIGCONT
};
const fetchForManager = async (input, init) => {
  if (victim === "announce" && String(input).endsWith("/oauth/token")) {
    victim = undefined;
    say({ tokenRequest: true });
    return fetch(input, init);
  }
  if (victim === "pause-in-flight" && String(input).endsWith("/oauth/token")) {
    victim = undefined;
    const response = await fetch(input, init);
    stop("in-flight");
    return response;
  }
  if (victim === "pause-answered" && String(input).endsWith("/oauth/token")) {
    victim = "write";
    const response = await fetch(input, init);
    return new Response(await response.text(), { status: response.status, headers: response.headers });
  }
  if (victim === "hold-answer" && String(input).endsWith("/oauth/token")) {
    victim = undefined;
    const response = await fetch(input, init);
    const body = await response.text();
    const released = new Promise((resolve) => process.once("SIGUSR2", resolve));
    say({ tokenResponse: response.status });
    await released;
    return new Response(body, { status: response.status, headers: response.headers });
  }
  if (victim && !victim.startsWith("pause-") && victim !== "write" && String(input).endsWith("/oauth/token")) {
    const mode = victim;
    victim = undefined;
    say({ tokenRequest: true });
    if (mode === "before") return forever();
    if (mode === "pause") {
      process.kill(process.pid, "SIGSTOP"); // frozen here, timers and all, until SIGCONT
      return fetch(input, init);
    }
    const response = await fetch(input, init);
    say({ tokenResponse: response.status });
    return forever();
  }
  return fetch(input, init);
};

const client = createClient({ url: env.REDIS_URL, ...(env.NO_OFFLINE_QUEUE ? { disableOfflineQueue: true } : {}) });
client.on("error", () => {});
await client.connect();
const storage = redisStorage(client, {
  prefix: env.PREFIX,
  ...(env.LEASE_MS ? { leaseMs: Number(env.LEASE_MS) } : {}),
  onLeaseLost: (error) => say({ leaseLost: error.code }),
});
const tm = createTokenManager({
  baseUrl: env.TENANT_URL,
  clientId: env.CLIENT_ID,
  redirectUri: env.REDIRECT_URI,
  scopes: ["profile:read"],
  storage: {
    ...storage,
    async set(key, value) {
      if (victim === "pause-intent" && key.endsWith(":intent")) {
        victim = undefined;
        stop("intent");
      }
      if (victim === "write" && key.endsWith(":tokens")) {
        victim = undefined;
        stop("answered");
      }
      return storage.set(key, value);
    },
  },
  fetch: fetchForManager,
  now: () => Date.now() + offsetMs,
  ...(env.REQUEST_TIMEOUT_MS ? { requestTimeoutMs: Number(env.REQUEST_TIMEOUT_MS) } : {}),
  ...(env.INTENT_WAIT_MS ? { intentWaitMs: Number(env.INTENT_WAIT_MS) } : {}),
});
let refreshed = false;
tm.on("tokens-refreshed", () => (refreshed = true));

/** GET /api/v1/auth/user with a token; after a 401, `onUnauthorized` and one retry (what the client package's middleware does). */
async function getUser() {
  const request = async () => {
    const token = await tm.getAccessToken();
    return { token, response: await fetch(`${env.TENANT_URL}/api/v1/auth/user`, { headers: { Authorization: `Bearer ${token}`, Accept: "application/json" } }) };
  };
  const first = await request();
  if (first.response.status !== 401) return first.response;
  tm.onUnauthorized(first.token);
  return (await request()).response;
}

/** A token and the user: what every member of the fleet needs to work. */
async function work() {
  const started = performance.now();
  refreshed = false;
  try {
    const response = await getUser();
    const user = response.ok ? await response.json() : undefined;
    return { ok: response.ok, status: response.status, userId: user?.id, refreshed, ms: performance.now() - started };
  } catch (e) {
    return { ok: false, name: e?.name, code: e?.code, refreshed, ms: performance.now() - started };
  }
}

const warm = await work();
if (!warm.ok) {
  say({ result: warm });
  process.exit(1);
}
say({ ready: true });

for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line);
  if (command.exit) break;
  if (typeof command.go === "number") offsetMs = command.go;
  say({ result: await work() });
}
await client.close();
// Idle keep-alive connections to the tenant would hold the process for seconds after its work is done.
process.exit(0);
