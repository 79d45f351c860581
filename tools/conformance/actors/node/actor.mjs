// The Node actor of the conformance suite (target `node`): drives the token manager through the
// public API of the BUILT packages (the manager, the Redis and the PostgreSQL storages), imported by their published names, in the line protocol of
// spec/conformance/PROTOCOL.md: the configuration in CONFORMANCE_ACTOR, commands on stdin, answers
// and events on stdout, one JSON object per line. Anything else goes to stderr.
//
// The faults of `arm` are reached through the two seams an application has too: the manager's
// `fetch` option (`sending`, `in-flight`) and the storage it is given, whose `lock` member is the
// documented bring-your-own-lock seam (`locked`, `answered`, `"lock": "none"`).
//
// Run: node tools/conformance/actors/node/actor.mjs. Never prints a token, code, verifier or state.
import { createInterface } from "node:readline";
import { createTenantClient } from "@tenant-integration/client";
import { createTokenManager, logSessionTo, memoryStorage, refreshIntents } from "@tenant-integration/token-manager";
import { fileStorage } from "@tenant-integration/token-manager/node";
import { postgresStorage } from "@tenant-integration/token-store-postgres";
import { redisClusterStorage, redisStorage } from "@tenant-integration/token-store-redis";
import pg from "pg";
import { createClient, createCluster } from "redis";
import {
  callSessions,
  closeSessions,
  openSessions,
  refuseIds,
  replayCallback,
  sessionsOf,
  signInSessions,
} from "./sessions.mjs";

/** The header that names the actor on every request to the tenant, for the sandbox's ledger. */
const ACTOR_HEADER = "Sandbox-Actor";
/** The points of the refresh protocol an `arm` may name (spec/token-store/README.md). */
const POINTS = ["locked", "sending", "in-flight", "answered"];
/** The manager's storage keys end so (`tenant-integration:<origin>:<clientId>:tokens`, the token-manager README). */
const TOKENS_KEY_SUFFIX = ":tokens";
const INTENT_KEY_SUFFIX = ":intent";
/**
 * The manager's events, by the protocol's `what` (`signed-in` and `revoked` are not reported).
 *
 * @type {Partial<Record<keyof import("@tenant-integration/token-manager").TokenManagerEvents, string>>}
 */
const SESSION_EVENTS = {
  "tokens-refreshed": "refreshed",
  "session-ended": "ended",
  "signed-out": "signed-out",
  "storage-failed": "storage-failed",
};
/** The protocol's log levels, by the kit's `Logger` method names. */
const LOG_LEVELS = { debug: "debug", info: "info", warn: "warning", error: "error" };
/** How long `exit` waits for the Redis client or the PostgreSQL pool to close (it may be down) before exiting anyway. */
const CLOSE_WAIT_MS = 1_000;

/**
 * @typedef {{ kind: "memory" | "file" | "redis" | "redis-cluster" | "postgres" | "web", lock?: "none", path?: string,
 *   staleMs?: number, url?: string, urls?: string[], prefix?: string, leaseMs?: number, table?: string }} StorageConfig
 * @typedef {{ target: string, name: string, tenant: string, clientId: string, redirectUri: string,
 *   scopes: import("@tenant-integration/token-manager").Scope[], storage: StorageConfig, clockOffsetMs?: number,
 *   manager?: { requestTimeoutMs?: number, intentWaitMs?: number, lockWaitMs?: number } }} Config
 * @typedef {"stop" | "hang" | "go"} Then
 * @typedef {{ id: number, cmd: string, [field: string]: unknown }} Command
 */

/** An error of the actor itself (a bad command or configuration), with a protocol `code`. */
class ActorError extends Error {
  name = "ActorError";
  /** @param {string} code @param {string} message */
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

/** One protocol line on stdout (written whole: a pipe write is synchronous on Linux, so it is out before a SIGSTOP). */
const say = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);

/** Never settles: a hung actor never goes on (the orchestrator kills it with SIGKILL). */
const forever = () => new Promise(() => {});

/** Everything the actor holds; the manager, its storage and the Redis client are made by `start`. */
const state = {
  /** @type {Config} */ config: readConfig(),
  offsetMs: 0,
  /** How many `tokens-refreshed` this manager emitted: a call compares it before and after. */
  refreshes: 0,
  /** The fault armed for the next refresh, one shot. @type {{ point: string, then: Then } | undefined} */
  armed: undefined,
  /** Set when an `answered`-armed refresh was answered 200: its token write is the point. */
  refreshAnswered: false,
  /** Tasks of this process running under the refresh lock (the manager runs one at a time). */
  lockTasks: 0,
  /** Whether the storage brings a lock (the `locked` point is reached under it). */
  hasLock: false,
  /** @type {import("@tenant-integration/token-manager").TokenManager} */ manager: undefined,
  /** The kit's client on the manager: the API as a user calls it. @type {import("@tenant-integration/client").TenantClient} */
  client: undefined,
  /** The Redis client or the PostgreSQL pool, closed at `exit`. @type {{ close(): Promise<unknown> } | undefined} */
  redis: undefined,
  /** The storage of the sessions feature: the real one, or its `"lock": "none"` replacement (not armed). */
  sessionsStorage: undefined,
  /** The sessions feature (sessions.mjs): the kit's sessions beside the manager, on the same storage. */
  sessions: undefined,
};

/** The configuration from CONFORMANCE_ACTOR; exits with status 2 when it is missing or not JSON. */
function readConfig() {
  try {
    const config = JSON.parse(process.env.CONFORMANCE_ACTOR ?? "null");
    if (config && typeof config === "object" && config.storage && typeof config.tenant === "string") return config;
  } catch {
    // reported below
  }
  process.stderr.write(
    "CONFORMANCE_ACTOR must hold the actor's configuration as JSON (spec/conformance/PROTOCOL.md)\n",
  );
  process.exit(2);
}

// -- faults --------------------------------------------------------------------------------------

/**
 * Arms `then` at `point` for the next refresh, replacing any fault armed before.
 *
 * @throws {ActorError} `UNSUPPORTED` for a point this storage cannot reach, `UNEXPECTED` for a bad `then`.
 */
function arm({ point, then }) {
  if (!POINTS.includes(point))
    throw new ActorError("UNSUPPORTED", `no such point of the refresh protocol: ${JSON.stringify(point)}`);
  if (!["stop", "hang", "go"].includes(then))
    throw new ActorError("UNEXPECTED", `then must be stop, hang or go, not ${JSON.stringify(then)}`);
  // memoryStorage brings no lock: the manager refreshes under its in-process lock, which no public
  // seam shows (giving the storage one would turn on the refresh intents of shared storages).
  if (point === "locked" && !state.hasLock)
    throw new ActorError("UNSUPPORTED", "memoryStorage has no lock of its own, so no seam shows the lock taken");
  state.armed = { point, then };
  state.refreshAnswered = false;
  return {};
}

/** At `point`: when it is the armed one, disarms it, says so, and stops (until SIGCONT), hangs, or goes on. */
async function reach(point) {
  if (state.armed?.point !== point) return;
  const { then } = state.armed;
  state.armed = undefined;
  say({ event: "at", point });
  if (then === "hang") return forever();
  if (then === "go") return;
  process.kill(process.pid, "SIGSTOP"); // frozen here, timers and all, until SIGCONT
}

/** Whether a request is a refresh-token grant at the token endpoint (RFC 6749 §6); the body is read, never printed. */
function isRefresh(input, init) {
  if (init?.method !== "POST" || !String(input instanceof Request ? input.url : input).endsWith("/oauth/token"))
    return false;
  try {
    return JSON.parse(String(init.body)).grant_type === "refresh_token";
  } catch {
    return false;
  }
}

/** A request's `init` naming the actor, and nothing else added. */
function named(input, init = {}) {
  // A Request (the client's) keeps its own headers: init's would replace them all.
  const headers = new Headers(input instanceof Request ? input.headers : undefined);
  new Headers(init.headers).forEach((value, name) => headers.set(name, value));
  headers.set(ACTOR_HEADER, state.config.name);
  return { ...init, headers };
}

/** The fetch of the sessions feature: names the actor; no fault (`arm` is for the manager). */
const namedFetch = (input, init) => fetch(input, named(input, init));

/**
 * The `fetch` of every request to the tenant (the manager's, the client's and the actor's own): names
 * the actor, and adds nothing else (the kit's headers are the kit's: the suite checks them from the
 * tenant's side); passes a refresh through `sending` as it is about to leave and `in-flight` once the
 * tenant has answered (status and headers received, the body unread by the manager, whose request
 * timer runs).
 *
 * @param {string | URL | Request} input
 * @param {RequestInit} [init]
 * @returns {Promise<Response>}
 */
async function tenantFetch(input, init = {}) {
  const request = named(input, init);
  if (!isRefresh(input, init)) return fetch(input, request);
  state.refreshAnswered = false;
  await reach("sending");
  const response = await fetch(input, request);
  await reach("in-flight");
  // `answered` comes once the manager has read this answer and writes its tokens (see armedStorage).
  if (response.status === 200 && state.armed?.point === "answered") state.refreshAnswered = true;
  return response;
}

// -- storage -------------------------------------------------------------------------------------

/** A lock that does not lock (`"lock": "none"`): only to prove that the suite can fail. */
const noLock = (_name, task) => task();

/**
 * The storage the manager is given: the real one, with its lock (or {@link noLock}) given back as
 * the storage's own `lock`, the documented bring-your-own-lock seam, wrapped only to count the tasks
 * running under it. It passes
 * - `locked` when the manager, under the refresh lock, reads (or writes) the refresh intent: it does
 *   so right after reading the token record under the lock and finding it in need of a refresh, and
 *   before its checks (another refresh's intent on that token, the lock still its own) and before it
 *   writes its own intent. The hand-written workers stopped at the intent's write, a step later;
 * - `answered` as the tokens of a refresh answered 200 are written: the answer read, the write not done.
 *
 * @param {import("@tenant-integration/token-manager").TokenStorage} inner
 * @param {import("@tenant-integration/token-manager").Lock | undefined} lock
 * @returns {import("@tenant-integration/token-manager").TokenStorage}
 */
function armedStorage(inner, lock) {
  const underLock = () => state.lockTasks > 0;
  return {
    ...inner,
    ...(lock && {
      lock: (name, task, wait) =>
        lock(
          name,
          async (held) => {
            state.lockTasks++;
            try {
              return await task(held);
            } finally {
              state.lockTasks--;
            }
          },
          wait,
        ),
    }),
    async get(key) {
      if (key.endsWith(INTENT_KEY_SUFFIX) && underLock()) await reach("locked");
      return inner.get(key);
    },
    async set(key, value) {
      if (key.endsWith(INTENT_KEY_SUFFIX) && underLock()) await reach("locked");
      if (key.endsWith(TOKENS_KEY_SUFFIX) && state.refreshAnswered) {
        state.refreshAnswered = false;
        await reach("answered");
      }
      return inner.set(key, value);
    },
  };
}

/**
 * The storage of `config.storage`, connecting to Redis for `redis` (a cluster client for `redis-cluster`),
 * and a node-postgres pool for `postgres`. `manager.lockWaitMs` is the bounded wait of the storage's
 * lock (`lockTimeoutMs` of fileStorage, `waitTimeoutMs` of redisStorage and postgresStorage); for
 * memoryStorage it is the manager's `lockTimeoutMs` (see managerOptions).
 *
 * @param {Config} config
 * @throws {ActorError} `UNSUPPORTED` for a storage kind the Node kit has not (`web`: a browser's).
 */
async function openStorage({ storage, manager = {} }) {
  const { lockWaitMs } = manager;
  let inner;
  if (storage.kind === "memory") inner = memoryStorage();
  else if (storage.kind === "file") {
    inner = fileStorage(storage.path, {
      ...(storage.staleMs === undefined ? {} : { staleMs: storage.staleMs }),
      ...(lockWaitMs === undefined ? {} : { lockTimeoutMs: lockWaitMs }),
    });
  } else if (storage.kind === "redis" || storage.kind === "redis-cluster") {
    const cluster = storage.kind === "redis-cluster";
    // A cluster client starts from the nodes it is given and learns the slots from them.
    const client = cluster
      ? createCluster({
          rootNodes: storage.urls.map((url) => ({ url })),
          // As the token-store-redis README configures it: a failover's new primary within the timeout.
          topologyRefreshOnReconnectionAttemptStrategy: 250,
        })
      : createClient({ url: storage.url });
    // A Redis outage must not crash the process: the commands fail, and the manager reports them.
    client.on("error", (e) => process.stderr.write(`redis: ${e?.message ?? e}\n`));
    await client.connect();
    state.redis = client;
    const options = {
      prefix: storage.prefix ?? "",
      ...(storage.leaseMs === undefined ? {} : { leaseMs: storage.leaseMs }),
      ...(lockWaitMs === undefined ? {} : { waitTimeoutMs: lockWaitMs }),
      // The store's own warning (it names the key, never a value), as the kit's log line.
      onLeaseLost: (error) => say({ event: "log", level: "warning", message: String(error.message) }),
    };
    inner = cluster ? redisClusterStorage(client, options) : redisStorage(client, options);
  } else if (storage.kind === "postgres") {
    // The app's pool, as a user makes it; the storage checks connections out of it.
    const pool = new pg.Pool({ connectionString: storage.url, application_name: state.config.name });
    // An idle connection lost in an outage must not crash the process: the next statement fails, typed.
    pool.on("error", (e) => process.stderr.write(`postgres: ${e?.message ?? e}\n`));
    state.redis = { close: () => pool.end() };
    inner = postgresStorage(pool, {
      baseUrl: state.config.tenant,
      clientId: state.config.clientId,
      table: storage.table,
      ...(lockWaitMs === undefined ? {} : { waitTimeoutMs: lockWaitMs }),
    });
  } else throw new ActorError("UNSUPPORTED", `the Node kit has no storage of kind ${JSON.stringify(storage.kind)}`);
  // "lock":"none" gives the storage a lock of one's own that does not lock, with the refresh intents
  // beside it, as the README says a lock of one's own is given (the manager refuses it without them).
  if (storage.lock === "none") inner = { ...inner, lock: noLock, refreshIntents };
  const { lock } = inner;
  state.hasLock = lock !== undefined;
  // The sessions get the storage itself: its lock per session, its pending sign-ins by state.
  state.sessionsStorage = inner;
  return armedStorage(inner, lock);
}

// -- the manager ---------------------------------------------------------------------------------

/** The kit's `Logger`: every line, at its level, as a protocol log event (the message only: fields are in it). */
const protocolLogger = Object.fromEntries(
  Object.entries(LOG_LEVELS).map(([kitLevel, level]) => [
    kitLevel,
    (_fields, message) => say({ event: "log", level, message: String(message) }),
  ]),
);

/** Makes the manager, reports its events, and says `ready`. */
async function start() {
  const { config } = state;
  state.offsetMs = config.clockOffsetMs ?? 0;
  const { requestTimeoutMs, intentWaitMs, lockWaitMs } = config.manager ?? {};
  const manager = createTokenManager({
    baseUrl: config.tenant,
    clientId: config.clientId,
    redirectUri: config.redirectUri,
    scopes: config.scopes,
    storage: await openStorage(config),
    fetch: tenantFetch,
    now: () => Date.now() + state.offsetMs,
    logger: logSessionTo(protocolLogger, "debug"),
    // Only the options given: the manager's defaults stand for the others.
    ...(requestTimeoutMs === undefined ? {} : { requestTimeoutMs }),
    ...(intentWaitMs === undefined ? {} : { intentWaitMs }),
    // The bounded wait of the manager's own lock, used only where the storage brings none.
    ...(lockWaitMs === undefined || config.storage.kind !== "memory" ? {} : { lockTimeoutMs: lockWaitMs }),
  });
  manager.on("tokens-refreshed", () => state.refreshes++);
  for (const [event, what] of /** @type {[keyof typeof SESSION_EVENTS, string][]} */ (Object.entries(SESSION_EVENTS))) {
    manager.on(event, (payload) => {
      const code = /** @type {{ error?: { code?: unknown } } | undefined} */ (payload)?.error?.code;
      say({ event: "session", what, ...(typeof code === "string" ? { code } : {}) });
    });
  }
  state.manager = manager;
  state.client = createTenantClient({ baseUrl: config.tenant, auth: manager, fetch: tenantFetch });
  state.sessions = openSessions({
    config,
    storage: state.sessionsStorage,
    fetch: namedFetch,
    isRefresh,
    now: () => Date.now() + state.offsetMs,
    logger: logSessionTo(protocolLogger, "debug"),
  });
  say({
    event: "ready",
    pid: process.pid,
    target: "node",
    runtime: `node ${process.versions.node}`,
    features: ["sessions"],
  });
}

// -- commands ------------------------------------------------------------------------------------

/**
 * `sign-in`: begins, requests the authorize URL without following the redirect (auto-approved),
 * completes with the Location; with `sessions`, signs each in (sessions.mjs).
 */
async function signIn(command) {
  const list = sessionsOf(command);
  if (list) return signInSessions(state.sessions, list);
  const { url } = await state.manager.beginAuthorization();
  const response = await tenantFetch(url, { redirect: "manual" });
  await response.arrayBuffer();
  const location = response.headers.get("location");
  // The Location holds the code and state: never in a message.
  if (response.status !== 302 || !location)
    throw new ActorError("UNEXPECTED", `the authorize endpoint answered ${response.status} without a redirect`);
  await state.manager.completeAuthorization(new URL(location, url).href);
  return {};
}

/**
 * `call`: `GET /api/v1/auth/user` through the kit's client (its middleware refreshes and retries once
 * after a 401); with `sessions`, through every session's client (sessions.mjs).
 */
async function call(command) {
  const list = sessionsOf(command);
  if (list) return callSessions(state.sessions, list);
  const before = state.refreshes;
  const { response } = await state.client.GET("/api/v1/auth/user");
  return { status: response.status, refreshed: state.refreshes > before };
}

/** `clock`: the manager's `now` becomes the wall clock plus `offsetMs`. */
function clock({ offsetMs }) {
  if (typeof offsetMs !== "number" || !Number.isFinite(offsetMs))
    throw new ActorError("UNEXPECTED", "clock: offsetMs must be a finite number");
  state.offsetMs = offsetMs;
  return {};
}

/**
 * Closes the kit's objects as a user's process does when its work ends: the manager and every
 * session's manager the sessions feature served (their intents' beats and retried writes stop).
 *
 * @throws whatever a close throws (the actor's failure)
 */
function closeKit() {
  state.manager?.close();
  if (state.sessions) closeSessions(state.sessions);
}

/** `exit`: closes the kit's objects, answers (a close that failed is the answer), then leaves. */
function exit({ id }) {
  let failed;
  try {
    closeKit();
  } catch (error) {
    failed = error;
  }
  say(failed ? { id, ok: false, error: failure(failed) } : { id, ok: true, result: {} });
  return quit(failed ? 1 : 0);
}

/**
 * Leaves with `status`: stops reading commands, closes the Redis client or the PostgreSQL pool
 * (bounded: it may be down; then it is destroyed), and lets the event loop end. No process.exit: what
 * the kit left running after its close (a timer, a connection) keeps the process alive, and the
 * orchestrator reports it (clean-exit).
 */
async function quit(status) {
  process.exitCode = status;
  lines.close();
  process.stdin.destroy();
  if (!state.redis) return;
  let timer;
  const closed = await Promise.race([
    state.redis.close().then(
      () => true,
      () => false,
    ),
    new Promise((resolve) => {
      timer = setTimeout(() => resolve(false), CLOSE_WAIT_MS);
    }),
  ]);
  clearTimeout(timer);
  if (!closed) state.redis.destroy?.();
}

/** Each command's work, resolving with its `result`. */
const COMMANDS = {
  "sign-in": signIn,
  call,
  clock,
  arm,
  status: async () => ({ signedIn: await state.manager.isSignedIn() }),
  revoke: async () => (await state.manager.revoke(), {}),
  "sign-out": async () => (await state.manager.signOut(), {}),
  "refuse-ids": (command) => refuseIds(state.sessions, command),
  "replay-callback": (command) => replayCallback(state.sessions, command, state.config.name),
};

/** The protocol's error object: the kit's stable code, else `UNEXPECTED`. Kit messages are already redacted; no cause is added. */
function failure(error) {
  return {
    code: typeof error?.code === "string" ? error.code : "UNEXPECTED",
    name: typeof error?.name === "string" ? error.name : "Error",
    message: String(error?.message ?? error),
  };
}

/** Runs one command and says its answer; commands overlap freely, answers carry their id. */
async function run(command) {
  if (command.cmd === "exit") return exit(command);
  try {
    const work = COMMANDS[command.cmd];
    if (!work) throw new ActorError("UNEXPECTED", `unknown command ${JSON.stringify(String(command.cmd))}`);
    say({ id: command.id, ok: true, result: await work(command) });
  } catch (error) {
    say({ id: command.id, ok: false, error: failure(error) });
  }
}

/** A command line, or undefined (said on stderr) for one that is not a command. */
function parseCommand(line) {
  let command;
  try {
    command = JSON.parse(line);
  } catch {
    // reported below
  }
  if (command && typeof command === "object" && Number.isInteger(command.id) && typeof command.cmd === "string")
    return command;
  if (line.trim() !== "") process.stderr.write(`ignored a line that is not a command (${line.length} characters)\n`);
  return undefined;
}

try {
  await start();
} catch (error) {
  const { code, name, message } = failure(error);
  process.stderr.write(`the manager did not start: ${code} (${name}): ${message}\n`);
  process.exit(1);
}

const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const command = parseCommand(line);
  if (command) void run(command);
});
// The orchestrator is gone (no `exit` came): close and leave, as a process whose input ends.
lines.on("close", () => {
  if (process.exitCode !== undefined) return; // `exit` closed already
  try {
    closeKit();
    void quit(0);
  } catch (error) {
    process.stderr.write(`the kit did not close: ${failure(error).code}: ${failure(error).message}\n`);
    void quit(1);
  }
});
