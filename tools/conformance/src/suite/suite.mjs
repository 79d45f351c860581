// The suite: the scenarios expanded for the targets present here, run one after another against one
// sandbox (and one redis-server, one PostgreSQL, and one Chromium when tabs run), with their results
// as a matrix.
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultCommands } from "./actor.mjs";
import { runScenario } from "./run.mjs";
import { expand, loadScenarios } from "./scenarios.mjs";
import {
  findPostgres,
  findRedisServer,
  OWN_CLUSTER_NODE_TIMEOUT_MS,
  startPostgresService,
  startRedis,
  startRedisCluster,
  startSandbox,
} from "./services.mjs";

export const CLIENT_ID = "conformance";
/** The redirect URI of the Node and Python actors (RFC 8252 loopback; the sandbox auto-approves, nothing listens). */
export const REDIRECT_URI = "http://127.0.0.1:53682/callback";
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/**
 * What this machine can run: the targets whose actor can start, redis-server and PostgreSQL. Outside
 * CI a missing one is left out and named; `required` makes it an error instead.
 */
export function survey({ commands = defaultCommands() } = {}) {
  const missing = [];
  const targets = [];
  for (const [target, command] of Object.entries(commands)) {
    if (!command && target === "go")
      missing.push({
        name: target,
        why: "packages/go/bin/conformance-actor is not built (pnpm build, with Go on PATH)",
      });
    else if (!command && target === "java")
      missing.push({
        name: target,
        why: "packages/java/conformance-actor/target/actor-command.json is not built (pnpm build, with a JDK 17 or newer)",
      });
    else if (!command)
      missing.push({
        name: target,
        why: "the repository's Python venv is missing (node tools/python/venv.mjs makes it)",
      });
    else if (target === "browser" && !existsSync(CHROMIUM))
      missing.push({ name: target, why: `${CHROMIUM} does not exist (apt-get install -y chromium)` });
    else targets.push(target);
  }
  const redis = findRedisServer();
  if (!redis) missing.push({ name: "redis", why: "redis-server is not installed (apt-get install -y redis-server)" });
  const postgres = findPostgres();
  if (!postgres)
    missing.push({
      name: "postgres",
      why: "PostgreSQL is not installed (apt-get install -y postgresql, or POSTGRES_BIN_DIR naming its bin directory)",
    });
  return { targets, redis, postgres, missing };
}

/**
 * The runs of every scenario (or those `filter` keeps) for the targets and storages present.
 *
 * @param {{ geometry?: "reduced"|"full", targets: string[], redis?: object, postgres?: object, filter?: (run: object) => boolean, dir?: string }} options
 *   `postgres` is what survey() found (runs on postgres storage are left out without it; by default
 *   they are kept whenever a PostgreSQL is found here).
 */
export function plan({ geometry = "reduced", targets, redis, postgres = findPostgres(), filter = () => true, dir }) {
  return loadScenarios(dir)
    .flatMap((scenario) => expand(scenario, { geometry, targets }))
    .filter(
      (run) => (redis || !run.storage.startsWith("redis")) && (postgres || run.storage !== "postgres") && filter(run),
    );
}

/**
 * The redis-server, or Redis Cluster, of a run's own (a run that restarts, stops, kills or fails over
 * Redis): with an append-only file when the scenario asks, and on a cluster with its replicas and a
 * short node timeout. Its close() also removes its directory.
 */
async function startOwnRedis(run, command) {
  const appendonly = Boolean(run.redis.appendonly);
  if (run.storage === "redis-cluster")
    return startRedisCluster({
      command,
      appendonly,
      replicas: run.redis.replicas ?? 0,
      nodeTimeoutMs: OWN_CLUSTER_NODE_TIMEOUT_MS,
    });
  const dir = await mkdtemp(join(tmpdir(), "conformance-redis-"));
  const server = await startRedis({ command, appendonly, dir }).catch(async (error) => {
    await rm(dir, { recursive: true, force: true });
    throw error;
  });
  return {
    ...server,
    async close() {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Starts the services for a set of runs and returns a runner; close it to stop everything. Runs
 * go in `lanes` parallel lanes, each with a sandbox of its own (a run moves its sandbox's clock);
 * one redis-server, one Redis Cluster and one PostgreSQL serve them all (each run has its own key
 * prefix, or table), but a run that stops Redis or PostgreSQL has its own; the lane that takes the browser runs has the Chromium.
 *
 * @param {{ runs: object[], commands?: object, redis?: { command: string }, noLock?: boolean, lanes?: number }} options
 */
export async function openSuite({ runs, commands = defaultCommands(), redis, noLock = false, lanes = 1 }) {
  const closers = [];
  const close = async () => {
    for (const closer of closers.reverse()) await closer().catch(() => {});
  };
  try {
    // One redis-server and one Redis Cluster (three primaries) for the runs that leave Redis running;
    // each run has its own key prefix.
    let shared;
    if (runs.some((run) => run.storage === "redis" && !run.redis.own)) {
      shared = await startRedis({ command: redis?.command });
      closers.push(() => shared.close());
    }
    let cluster;
    if (runs.some((run) => run.storage === "redis-cluster" && !run.redis.own)) {
      cluster = await startRedisCluster({ command: redis?.command });
      closers.push(() => cluster.close());
    }
    // One PostgreSQL for the runs that leave it running; each run has a table of its own.
    let postgres;
    if (runs.some((run) => run.storage === "postgres" && !run.postgres?.own)) {
      postgres = await startPostgresService();
      closers.push(() => postgres.close());
    }
    const wantsBrowser = runs.some((run) => run.storage === "web");
    const opened = [];
    for (let index = 0; index < Math.max(1, Math.min(lanes, runs.length)); index++) {
      let browser;
      const clients = [{ id: CLIENT_ID, redirectUris: [REDIRECT_URI] }];
      if (index === 0 && wantsBrowser) {
        const { startBrowserHost } = await import("../../actors/browser/host.mjs");
        browser = await startBrowserHost({});
        closers.push(() => browser.close());
        clients[0].redirectUris.push(browser.redirectUri);
      }
      // A user of its own for every session of the runs that have sessions.
      const sessions = Math.max(0, ...runs.map((run) => run.sessions ?? 0));
      const sandbox = await startSandbox(clients, sessions > 0 ? { users: Math.max(3, sessions) } : {});
      closers.push(() => sandbox.close());
      opened.push({ sandbox, browser, busy: false });
    }
    const waiting = [];
    /** A free lane that can take the run (browser runs need the lane with the Chromium). */
    const acquire = (run) =>
      new Promise((resolve) => {
        const take = () => {
          const lane = opened.find((candidate) => !candidate.busy && (run.storage !== "web" || candidate.browser));
          if (!lane) return false;
          lane.busy = true;
          resolve(lane);
          return true;
        };
        if (!take()) waiting.push(take);
      });
    const release = (lane) => {
      lane.busy = false;
      const next = waiting.findIndex((take) => take());
      if (next >= 0) waiting.splice(next, 1);
    };
    let runNumber = 0;
    return {
      sandbox: opened[0].sandbox,
      /**
       * Runs one run in the first free lane; a run that restarts, stops or kills Redis gets a
       * redis-server, or a Redis Cluster, of its own, and one that does so to PostgreSQL a PostgreSQL.
       */
      async run(run) {
        const lane = await acquire(run);
        // This run's number, taken before any await: lanes run at once, and it names the run's keys and table.
        const number = ++runNumber;
        let own;
        let ownPostgres;
        try {
          // Tabs share one browser across runs: a run's tabs start without the last run's session.
          if (run.storage === "web") await lane.browser.reset();
          if (run.redis.own) own = await startOwnRedis(run, redis?.command);
          // A run that restarts, stops or kills PostgreSQL has a server of its own.
          if (run.storage === "postgres" && run.postgres?.own) ownPostgres = await startPostgresService();
          const server = ownPostgres ?? postgres;
          return await runScenario(run, {
            sandbox: lane.sandbox,
            clientId: CLIENT_ID,
            redirectUri: REDIRECT_URI,
            commands,
            redisUrl: run.storage === "redis" ? (own ?? shared)?.url : undefined,
            redisClusterUrls: run.storage === "redis-cluster" ? (own ?? cluster)?.urls : undefined,
            redis: own,
            postgresUrl: run.storage === "postgres" ? server?.url : undefined,
            postgresTable: run.storage === "postgres" ? await server?.table(`conformance_${number}`) : undefined,
            postgres: ownPostgres,
            browser: lane.browser,
            runNumber: number,
            noLock,
          });
        } finally {
          await own?.close();
          await ownPostgres?.close();
          release(lane);
        }
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
