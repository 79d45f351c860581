// A server acting for many users after one expiry (issues 39 and 40): 1,000 sessions whose access
// tokens expire together, served by 4 processes of one kit sharing one storage (Redis, PostgreSQL,
// a token file), each process calling the API for every session at once, as four replicas of a
// server would for their users. Every session must be refreshed exactly once (counted from the
// sandbox's ledger, per token family) and every answer must be its own user's. The wall time until
// all four processes answered is set against the tenant's own time for the same requests on this
// machine: 4 bare processes (bare-refresher.mjs: node:http, no kit) refreshing 250 sessions each and
// reading the user 4 times per session, the same 1,000 refreshes and 4,000 reads (goal ≤ 1.5×).
//
// The processes are the conformance suite's actors with the `sessions` feature (PROTOCOL.md,
// "Sessions": each kit's sessions object, TypeScript `createSessions`, Python `Sessions`, Go
// `tokenmanager.Sessions`), against the sandbox process on loopback. A kit whose actor does not drive
// its sessions, or that has no such storage, gets a row saying so; a run on Redis or PostgreSQL that
// fails fails the row; on a token file a failure is the finding ("does not hold at this size").
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { defaultCommands, startActor } from "../conformance/src/suite/actor.mjs";
import { FEATURES, TARGETS } from "../conformance/src/suite/scenarios.mjs";
import {
  EXPIRE_SECONDS,
  findPostgres,
  findRedisServer,
  startPostgresService,
  startRedis,
  startSandbox,
} from "../conformance/src/suite/services.mjs";
import { rowLine } from "./report.mjs";
import { refreshesPerFamily } from "./sessions-rows.mjs";
import { QUICK, formatTimes, judgedRow, paired, shuffled } from "./stats.mjs";

const here = dirname(fileURLToPath(import.meta.url));
/** Sessions expiring together, and the processes serving them. */
export const SESSIONS = QUICK ? 100 : 1000;
const PROCESSES = 4;
/** Timed rounds, after one untimed. */
const ROUNDS = QUICK ? 2 : 7;
/** The fleet within this many times the tenant's own time (issue 39). */
const GOAL = 1.5;
const CLIENT_ID = "bench-sessions";
const REDIRECT_URI = "http://127.0.0.1:53682/callback";
const SCOPE = "profile:read";
/** How long a command for every session may take: a sign-in of 1,000 sessions, a call on a busy machine. */
const COMMAND_MS = 300_000;
const KITS = ["node", "python", "go"];
const LABELS = { node: "TypeScript", python: "Python", go: "Go" };
const WHERE = { redis: "one Redis", postgres: "one PostgreSQL", file: "one token file" };
const STORAGES = ["redis", "postgres", "file"];

/** How the rows are measured, written under the table in BENCHMARKS.md (bench.mjs reads it). */
export const sessionsFleetMethod = `Contenders: ${PROCESSES} processes of one kit (the conformance suite's actors with the \`sessions\` feature, \`tools/conformance/actors\`: each kit's sessions object, TypeScript \`createSessions\` with \`sessionClient\`, Python \`Sessions\`, Go \`tokenmanager.Sessions\` with \`Client(id)\`) sharing one storage (one redis-server, one PostgreSQL 15 table, one token file) on loopback, ${SESSIONS} sessions signed in (session i as the sandbox's user i), then released together after every session's access token expired: each process has every session's API client call GET /api/v1/auth/user at once (at most 64 sessions in flight per process on at most 32 connections, as the Go actor bounds them), so each session's refresh is contended by all ${PROCESSES} processes. Timed: from the release until all ${PROCESSES} processes answered. Checked per release from the sandbox's ledger (cleared before each): every one of the ${SESSIONS} token families refreshed exactly once, no refresh token presented twice, and every session answered with its own user (the actors' \`crossed\`); any other count misses the goal whatever the time. Baseline, the tenant's own time for the same requests: ${PROCESSES} bare processes (\`tools/bench/bare-refresher.mjs\`: node:http with a keep-alive agent, lighter than any kit's client, tokens in memory, no storage, lock or kit), ${SESSIONS / PROCESSES} sessions each, each refreshing its sessions and reading the user ${PROCESSES} times per session with the new token (the same ${SESSIONS} refreshes and ${PROCESSES * SESSIONS} reads, 64 sessions in flight per process on 32 connections); A/A: a second such group of bare processes against the first. Per storage, the kits and both bare groups run in the same rounds against one sandbox process: one untimed round, then ${ROUNDS}; each round moves the sandbox's clock and every actor's 15 min 1 s on and releases every group in a new random order. A row is the median of the rounds' own ratios (fleet / bare), with their middle half and range; goal: ≤ ${GOAL}×, met when the middle half lies under it, noise when the A/A's middle half is wider than the distance to the goal. A kit whose actor does not declare \`sessions\` (FEATURES in tools/conformance/src/suite/scenarios.mjs) or has no such storage (TARGETS) is listed as not measured, with why. On a token file, where each write rewrites the whole file under one write lock (filestorage's README), a run that fails is reported as not holding at this size, with the first error. Rerun: \`node tools/bench/sessions-fleet.mjs [redis|postgres|file] [--quick]\` after \`pnpm build\` (\`--quick\`: 100 sessions, 2 rounds, to check that it runs).`;

/** Why `kit` has no row on `storage` on this commit, or undefined. */
function notMeasured(kit, storage) {
  if (!FEATURES.sessions?.includes(kit))
    return `not measured: the ${LABELS[kit]} conformance actor does not drive its kit's sessions on this commit (FEATURES.sessions in tools/conformance/src/suite/scenarios.mjs)`;
  if (!TARGETS[kit]?.includes(storage))
    return `not measured: no ${LABELS[kit]} ${storage === "postgres" ? "PostgreSQL" : storage} storage on this commit (TARGETS in tools/conformance/src/suite/scenarios.mjs)`;
  if (!defaultCommands()[kit])
    return kit === "go"
      ? "left out: the Go actor is not built (the Go package's build)"
      : "left out: the repository's Python venv is missing (node tools/python/venv.mjs)";
  return undefined;
}

/** Why nothing runs on `storage` here, or undefined. */
function storageMissing(storage) {
  if (storage === "redis" && !findRedisServer()) return "left out: redis-server is not installed";
  if (storage === "postgres" && !findPostgres()) return "left out: PostgreSQL is not installed";
  return undefined;
}

/** A bare process (bare-refresher.mjs): `request(command)` resolves with its answer line. */
function startBare(tenant) {
  const child = spawn(process.execPath, [join(here, "bare-refresher.mjs")], {
    env: {
      ...process.env,
      BARE_REFRESHER: JSON.stringify({
        tenant: tenant.url,
        clientId: CLIENT_ID,
        redirectUri: REDIRECT_URI,
        scope: SCOPE,
      }),
    },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const waiting = [];
  createInterface({ input: child.stdout }).on("line", (line) => waiting.shift()?.resolve(JSON.parse(line)));
  child.once("exit", (code) => {
    for (const w of waiting.splice(0)) w.reject(new Error(`bare-refresher.mjs exited (${code})`));
  });
  return {
    pid: child.pid,
    request(command) {
      return new Promise((resolve, reject) => {
        waiting.push({ resolve, reject });
        child.stdin.write(`${JSON.stringify(command)}\n`);
      });
    },
    stop() {
      child.stdin.end();
      return new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once("exit", resolve)));
    },
  };
}

/** A group of bare processes, the sessions dealt among them; `release()` refreshes every session and reads. */
async function bareGroup(tenant, sessions) {
  const processes = Array.from({ length: PROCESSES }, () => startBare(tenant));
  const share = (i) => sessions.filter((_, j) => j % PROCESSES === i).map((s) => s.user);
  const answers = await Promise.all(processes.map((p, i) => p.request({ cmd: "sign-in", users: share(i) })));
  const failed = answers.find((a) => !a.ok);
  if (failed) {
    await Promise.all(processes.map((p) => p.stop()));
    throw new Error(`a bare process could not sign in: ${failed.error}`);
  }
  return {
    async release() {
      const start = performance.now();
      const done = await Promise.all(processes.map((p) => p.request({ cmd: "refresh", reads: PROCESSES })));
      const wall = performance.now() - start;
      const bad = done.find((a) => !a.ok);
      if (bad) throw new Error(`a bare process failed: ${bad.error}`);
      return wall;
    },
    clock: async () => {},
    stop: () => Promise.all(processes.map((p) => p.stop())),
  };
}

/** A group of PROCESSES actors of `kit` on `storage`, the sessions signed in by the first. */
async function kitGroup(tenant, kit, storage, sessions, name) {
  const config = {
    tenant: tenant.url,
    clientId: CLIENT_ID,
    redirectUri: REDIRECT_URI,
    scopes: [SCOPE],
    storage,
    clockOffsetMs: tenant.offsetMs,
    manager: {},
  };
  const command = defaultCommands()[kit];
  const starts = await Promise.allSettled(
    Array.from({ length: PROCESSES }, (_, i) =>
      startActor({ name: `${name}${i}`, target: kit, config, command, step: () => "bench" }),
    ),
  );
  const actors = starts.filter((s) => s.status === "fulfilled").map((s) => s.value);
  const stop = () => Promise.all(actors.map((actor) => actor.stop()));
  try {
    const refused = starts.find((s) => s.status === "rejected");
    if (refused) throw refused.reason;
    if (!actors.every((actor) => actor.features.includes("sessions")))
      throw new Error(`the ${LABELS[kit]} actor does not declare the sessions feature`);
    const signedIn = await actors[0].request("sign-in", { sessions }, COMMAND_MS);
    if (!signedIn.ok) throw new Error(`sign-in failed: ${signedIn.error.code}: ${signedIn.error.message}`);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    async release() {
      const start = performance.now();
      const answers = await Promise.all(actors.map((actor) => actor.request("call", { sessions }, COMMAND_MS)));
      const wall = performance.now() - start;
      const failed = answers.find((a) => !a.ok);
      if (failed) throw new Error(`${failed.error.code}: ${failed.error.message}`);
      const wrong = answers.find((a) => a.result.status !== 200);
      if (wrong) throw new Error(`a process got status ${wrong.result.status}`);
      const crossed = answers.reduce((n, a) => n + (a.result.crossed?.length ?? 0), 0);
      if (crossed > 0) throw new Error(`${crossed} sessions were answered with another user's account`);
      return wall;
    },
    clock: (offsetMs) => Promise.all(actors.map((actor) => actor.request("clock", { offsetMs }))),
    stop,
  };
}

/** A services set for `storage`: `storageFor(name)` gives a group a storage of its own; `close()`. */
async function startStorage(storage) {
  const dir = mkdtempSync(join(tmpdir(), "bench-sessions-"));
  const redis = storage === "redis" ? await startRedis({ command: findRedisServer().command }) : undefined;
  const postgres = storage === "postgres" ? await startPostgresService() : undefined;
  const slug = (name) => name.replace(/\W/g, "_").toLowerCase();
  return {
    async storageFor(name) {
      if (storage === "redis") return { kind: "redis", url: redis.url, prefix: `bench-${slug(name)}:` };
      if (storage === "postgres")
        return { kind: "postgres", url: postgres.url, table: await postgres.table(`bench_sessions_${slug(name)}`) };
      return { kind: "file", path: join(dir, slug(name), "tokens.json") };
    },
    async close() {
      await redis?.close();
      await postgres?.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Every kit of `kits` on `storage`, with two bare groups, in the same rounds: per group its wall
 * time each round and whether each release refreshed every session exactly once.
 */
async function runRounds(storage, kits) {
  const services = await startStorage(storage);
  const groups = {};
  let tenant;
  try {
    tenant = await startSandbox([{ id: CLIENT_ID, redirectUris: [REDIRECT_URI] }], { users: SESSIONS });
    const users = await tenant.users();
    const sessions = users.slice(0, SESSIONS).map((user, i) => ({ id: `user.${i}@example.org`, user }));
    if (sessions.length < SESSIONS) throw new Error(`the sandbox has ${users.length} users for ${SESSIONS} sessions`);
    for (const kit of kits)
      groups[kit] = await kitGroup(tenant, kit, await services.storageFor(kit), sessions, `${kit}-`);
    groups.bare = await bareGroup(tenant, sessions);
    groups.bareAgain = await bareGroup(tenant, sessions);
    const runs = Object.fromEntries(Object.keys(groups).map((name) => [name, { walls: [], counts: [] }]));
    for (let round = 0; round <= ROUNDS; round++) {
      await tenant.advance(EXPIRE_SECONDS);
      await Promise.all(Object.values(groups).map((group) => group.clock(tenant.offsetMs)));
      for (const name of shuffled(Object.keys(groups))) {
        await tenant.reset();
        const wall = await groups[name].release().catch((error) => {
          const sofar = Object.entries(runs)
            .map(
              ([group, run]) => `${LABELS[group] ?? group} ${run.walls.map((w) => w.toFixed(0)).join("/") || "-"} ms`,
            )
            .join(", ");
          throw new Error(
            `${LABELS[name] ?? name} on ${WHERE[storage]}, round ${round} of ${ROUNDS} (after the untimed one): ${error.message} (the rounds before: ${sofar})`,
          );
        });
        const counts = refreshesPerFamily(await tenant.ledger());
        if (round === 0) continue;
        runs[name].walls.push(wall);
        runs[name].counts.push(counts);
      }
    }
    return runs;
  } finally {
    for (const group of Object.values(groups)) await group.stop();
    await tenant?.close();
    await services.close();
  }
}

/** The row of `kit` on `storage` from `runs`: its fleet against the bare processes, the bare A/A beside. */
function kitRow(kit, storage, runs) {
  const { walls, counts } = runs[kit];
  const c = paired(walls, runs.bare.walls);
  const exact = counts.every((n) => n.once === SESSIONS && n.otherwise === 0 && n.reuses === 0);
  const told = exact
    ? `every session refreshed once in each of ${counts.length} rounds, no refresh token presented twice`
    : `refreshed once: ${counts.map((n) => `${n.once}/${SESSIONS}${n.otherwise ? ` (${n.otherwise} otherwise)` : ""}${n.reuses ? ` (${n.reuses} reuses)` : ""}`).join(", ")}`;
  const row = judgedRow({
    metric: `${SESSIONS} sessions expiring together, ${PROCESSES} ${LABELS[kit]} processes on ${WHERE[storage]}: against the tenant's own time`,
    value: `${formatTimes(c, "ms")}, the fleet against the tenant's own time (${PROCESSES} bare processes, the same ${SESSIONS} refreshes and ${PROCESSES * SESSIONS} reads); ${told}`,
    c,
    aa: paired(runs.bareAgain.walls, runs.bare.walls),
    aaLabel: "bare processes against bare processes",
    style: "times",
    goal: { atMost: GOAL },
    goalText: `every session refreshed once; ≤ ${GOAL}× the tenant's own time`,
  });
  // One refresh per session is exact: any other count misses the goal, whatever the times say.
  if (!exact) Object.assign(row, { verdict: "missed", met: false });
  return row;
}

/** A row saying why `kit` has no figure on `storage`. */
const leftOut = (kit, storage, why) => ({
  metric: `${SESSIONS} sessions expiring together, ${PROCESSES} ${LABELS[kit]} processes on ${WHERE[storage]}`,
  value: why,
  goal: "",
  met: null,
});

/**
 * The rows on `storage`: each kit that drives its sessions on it, in the same rounds as the bare
 * groups; a row saying why for each other kit. On a token file a failed run is the finding.
 */
export async function sessionsFleetOn(storage) {
  const absent = storageMissing(storage);
  if (absent) return KITS.map((kit) => leftOut(kit, storage, absent));
  const kits = KITS.filter((kit) => !notMeasured(kit, storage));
  const others = KITS.filter((kit) => notMeasured(kit, storage)).map((kit) =>
    leftOut(kit, storage, notMeasured(kit, storage)),
  );
  if (kits.length === 0) return others;
  let runs;
  try {
    runs = await runRounds(storage, kits);
  } catch (error) {
    if (storage !== "file") throw error;
    const why = error instanceof Error ? error.message.split("\n")[0] : String(error);
    return [
      ...kits.map((kit) => ({
        ...leftOut(kit, storage, `does not hold at ${SESSIONS} sessions on a token file: ${why}`),
        goal: "every session refreshed once",
        met: false,
        verdict: "missed",
        aa: "none",
      })),
      ...others,
    ];
  }
  return [...kits.map((kit) => kitRow(kit, storage, runs)), ...others];
}

/**
 * Every storage's rows (or `only` one's). A storage whose run failed gets a failed row saying why
 * (the run fails after the table, loudly) and the next storage is measured all the same.
 */
export async function sessionsFleet(only) {
  const rows = [];
  for (const storage of STORAGES) {
    if (only && only !== storage) continue;
    try {
      rows.push(...(await sessionsFleetOn(storage)));
    } catch (error) {
      rows.push({
        metric: `${SESSIONS} sessions expiring together, ${PROCESSES} processes on ${WHERE[storage]}`,
        value: `failed: ${error instanceof Error ? error.message.split("\n")[0] : error}`,
        goal: "every session refreshed once",
        met: false,
        failed: true,
      });
    }
  }
  return rows;
}

// `node tools/bench/sessions-fleet.mjs [redis|postgres|file] [--quick]` prints the rows alone.
if (import.meta.url === `file://${process.argv[1]}`) {
  for (const row of await sessionsFleet(process.argv.slice(2).find((a) => !a.startsWith("--"))))
    console.log(rowLine(row));
}
