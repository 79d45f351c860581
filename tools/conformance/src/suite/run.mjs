// One run: a scenario's steps on one storage with one actor mix, then its invariants. The run
// drives real processes (the actors), the real sandbox and a real redis-server; it never hangs:
// every wait has a bound, and every process it started is stopped when it ends, pass or fail.
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { ActorError, startActor } from "./actor.mjs";
import {
  invariantsFor,
  noSpuriousLogout,
  refreshCount,
  secretsHygiene,
  singleRedemption,
  tenantSaw,
} from "./invariants.mjs";
import { EXPIRE_SECONDS, startDisk } from "./services.mjs";

/** A step that did not go as the scenario says; the run stops there. */
class StepFailure extends Error {
  name = "StepFailure";
}

/** The storage an actor of this run is given (PROTOCOL.md, "Start"). */
function storageConfig(run, env, dir) {
  const lock = env.noLock ? { lock: "none" } : {};
  const stale = run.timing.staleMs;
  switch (run.storage) {
    case "file":
      // A directory the kit must create, so that its mode is the kit's (0700).
      return { kind: "file", path: join(dir, "state", "tokens.json"), ...(stale ? { staleMs: stale } : {}), ...lock };
    case "redis":
      return {
        kind: "redis",
        url: env.redisUrl,
        prefix: `conformance:${env.runNumber}:`,
        ...(stale ? { leaseMs: stale } : {}),
        ...lock,
      };
    case "redis-cluster":
      // The cluster's nodes are the client's seeds; the run's keys share one hash slot (the kits' key scheme).
      return {
        kind: "redis-cluster",
        urls: env.redisClusterUrls,
        prefix: `conformance:${env.runNumber}:`,
        ...(stale ? { leaseMs: stale } : {}),
        ...lock,
      };
    default:
      return { kind: run.storage, ...lock };
  }
}

/**
 * The Redis key of the run's session tokens (spec/token-store/README.md, "Redis keys"):
 * `<prefix>tenant-integration:{<origin>:<clientId>}:tokens`.
 */
function sessionKey(storage, tenant, clientId) {
  return `${storage.prefix ?? ""}tenant-integration:{${new URL(tenant).origin}:${clientId}}:tokens`;
}

function managerOptions(timing) {
  const options = {};
  for (const name of ["requestTimeoutMs", "intentWaitMs", "lockWaitMs"])
    if (timing[name] !== undefined) options[name] = timing[name];
  return options;
}

/** The steps with repeats unrolled, each with its label ("3", "4.2.1"). */
function unroll(steps, prefix = "") {
  return steps.flatMap((step, index) => {
    const [kind, body] = Object.entries(step)[0];
    const label = `${prefix}${index + 1}`;
    if (kind !== "repeat") return [{ kind, body, label }];
    return Array.from({ length: body.times }, (_, round) => unroll(body.steps, `${label}.${round + 1}.`)).flat();
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** How many actors start at once. */
const START_BATCH = 10;

/**
 * Runs one expanded run.
 *
 * @param {object} run from expand()
 * @param {{ sandbox: object, clientId: string, redirectUri: string, commands: object, redisUrl?: string, redisClusterUrls?: string[],
 *   redis?: { restart(key: string): Promise<void> }, browser?: object, runNumber: number, noLock?: boolean }} env
 *   `redis` is the run's own redis-server or Redis Cluster, for its redis steps (given the session's key).
 * @returns {Promise<object>} the run's result: passed, failures, refreshes per expiry, worst wait…
 */
export async function runScenario(run, env) {
  const started = performance.now();
  const dir = await mkdtemp(join(tmpdir(), "conformance-"));
  const { sandbox } = env;
  await sandbox.reset();
  const storage = storageConfig(run, env, dir);
  const bound = run.timing.waitBoundMs;
  let current = "start";
  const actors = [];
  const alive = new Set();
  const stopped = new Set();
  const pending = [];
  const failures = [];
  let expiries = 0;
  let worstWaitMs = 0;
  /** What each armed actor does at its point: only a `stop` leaves it stopped. */
  const armedThen = new Map();
  // Disk faults: the token file's directory is a tmpfs of the run's own.
  const disk = run.disk ? await startDisk(dirname(storage.path)) : undefined;

  const configFor = (index) => ({
    tenant: sandbox.url,
    clientId: env.clientId,
    redirectUri: run.storage === "web" ? env.browser.redirectUri : env.redirectUri,
    scopes: ["profile:read"],
    storage,
    clockOffsetMs: sandbox.offsetMs + run.skewMs[index % run.skewMs.length],
    manager: managerOptions(run.timing),
    ...(run.storage === "web"
      ? { browser: { cdpEndpoint: env.browser.cdpEndpoint, pageUrl: env.browser.pageUrl } }
      : {}),
  });
  const spawnActor = (index, target, name) =>
    startActor({ name, target, config: configFor(index), command: env.commands[target], step: () => current });

  const who = (selector) => {
    const all = actors.map((_, index) => index).filter((index) => alive.has(index));
    if (selector === "all") return all;
    if (selector === "others") return all.filter((index) => index !== 0);
    return selector;
  };
  const describeAnswer = (answer) =>
    answer.ok
      ? `status ${answer.result.status}`
      : `${answer.error.code} (${answer.error.name ?? "Error"}: ${answer.error.message.slice(0, 200)})`;
  const expectOk = async (actor, cmd, fields = {}) => {
    const answer = await actor.request(cmd, fields, bound);
    if (!answer.ok)
      throw new StepFailure(`step ${current}: ${actor.describe()} failed "${cmd}": ${describeAnswer(answer)}`);
    return answer;
  };
  /** Every outcome a call ended with ("200" or an error code), for the ended outcome's check. */
  const outcomes = new Set();
  /** Sends "call" to one actor and checks its answer against `expected` (the outcomes allowed: "200" or error codes). */
  const call = async (index, expected, label) => {
    const actor = actors[index];
    let answer;
    try {
      answer = await actor.request("call", {}, bound);
    } catch (error) {
      if (error instanceof ActorError && /did not answer/.test(error.message))
        throw new StepFailure(`bounded-waits: step ${label}: ${error.message}`);
      throw error;
    }
    if (answer.dropped) return;
    worstWaitMs = Math.max(worstWaitMs, answer.ms);
    const got = answer.ok ? String(answer.result.status) : answer.error.code;
    outcomes.add(got);
    if (!expected.includes(got))
      throw new StepFailure(
        `step ${label}: ${actor.describe()} was to end with ${expected.join(" or ")}, and ended with ${describeAnswer(answer)}`,
      );
  };
  const moveClocks = async (seconds) => {
    await sandbox.advance(seconds);
    await Promise.all(
      [...alive]
        .filter((index) => !stopped.has(index))
        .map((index) =>
          expectOk(actors[index], "clock", { offsetMs: sandbox.offsetMs + run.skewMs[index % run.skewMs.length] }),
        ),
    );
  };

  const execute = {
    "sign-in": ({ actor }) => expectOk(actors[actor], "sign-in"),
    expire: async () => {
      expiries++;
      await moveClocks(EXPIRE_SECONDS);
    },
    call: async ({ actors: selector, wait = true, expect = "200" }) => {
      const label = current;
      const allowed = [expect].flat().map(String);
      const calls = who(selector).map((index) => call(index, allowed, label));
      if (wait) {
        const settled = await Promise.allSettled(calls);
        const failed = settled.find((outcome) => outcome.status === "rejected");
        if (failed) throw failed.reason;
      } else pending.push(...calls.map((promise) => promise.catch((error) => error)));
    },
    await: async () => {
      const outcomes = await Promise.all(pending.splice(0));
      const failed = outcomes.find((outcome) => outcome instanceof Error);
      if (failed) throw failed;
    },
    arm: ({ actor, point, then }) => {
      armedThen.set(actor, then);
      return expectOk(actors[actor], "arm", { point, then });
    },
    "wait-for": async ({ actor }) => {
      const message = await actors[actor].waitEvent((m) => m.event === "at", bound, "it reached its armed point", {
        seen: true,
      });
      if (armedThen.get(actor) === "stop") stopped.add(actor);
      return message;
    },
    stop: ({ actor }) => {
      stopped.add(actor);
      actors[actor].signal("SIGSTOP");
    },
    sleep: (name) => sleep(run.timing[name]),
    resume: ({ actor }) => {
      stopped.delete(actor);
      actors[actor].signal("SIGCONT");
    },
    kill: async ({ actor }) => {
      alive.delete(actor);
      stopped.delete(actor);
      await actors[actor].kill();
    },
    fault: (spec) => sandbox.addFault({ route: "/oauth/token", method: "POST", ...spec }),
    // On a cluster the step acts on the primary that owns the session's slot, found by one of its keys.
    redis: (what) => env.redis[what](sessionKey(storage, sandbox.url, env.clientId)),
    disk: (what) => disk[what](),
    revoke: ({ actor }) => expectOk(actors[actor], "revoke"),
    "sign-out": ({ actor }) => expectOk(actors[actor], "sign-out"),
  };

  let ledger;
  const runtimes = new Set();
  try {
    // In batches: a hundred interpreters started at once on two cores would each take most of a minute.
    const started = [];
    for (let first = 0; first < run.actorTargets.length; first += START_BATCH) {
      const batch = run.actorTargets.slice(first, first + START_BATCH);
      started.push(
        ...(await Promise.allSettled(
          batch.map((target, offset) => spawnActor(first + offset, target, `a${first + offset}`)),
        )),
      );
    }
    for (const [index, outcome] of started.entries()) {
      if (outcome.status === "fulfilled") {
        actors[index] = outcome.value;
        alive.add(index);
        runtimes.add(outcome.value.runtime);
      }
    }
    const failedStart = started.find((outcome) => outcome.status === "rejected");
    if (failedStart) throw failedStart.reason;
    for (const step of unroll(run.steps)) {
      current = `${step.label} (${step.kind})`;
      await execute[step.kind](step.body ?? {});
    }
    // A step left calls pending without an await: settle them before the invariants.
    await execute.await();
    const checks = invariantsFor(run);
    if (checks.includes("no-lost-rotation") && run.storage !== "memory") {
      current = "the fresh actor (no-lost-rotation)";
      const targets = [...new Set(run.actorTargets)];
      const target = targets[(targets.indexOf(run.actorTargets[0]) + 1) % targets.length];
      const fresh = await spawnActor(actors.length, target, "fresh");
      actors.push(fresh);
      alive.add(actors.length - 1);
      expiries++;
      await moveClocks(EXPIRE_SECONDS);
      const answer = await fresh.request("call", {}, bound);
      if (!answer.ok || answer.result.status !== 200)
        failures.push(
          `no-lost-rotation: a fresh ${target} actor could not continue the session from the storage: ${describeAnswer(answer)}`,
        );
    }
  } catch (error) {
    failures.push(
      error instanceof StepFailure || error instanceof ActorError
        ? error.message
        : `step ${current}: ${error?.stack ?? error}`,
    );
  }

  try {
    ledger = await sandbox.ledger();
  } catch (error) {
    failures.push(`the ledger could not be read: ${error.message}`);
  }
  const checks = invariantsFor(run);
  const refreshes = ledger ? refreshCount(ledger) : undefined;
  if (ledger) {
    if (checks.includes("single-redemption")) failures.push(...singleRedemption(ledger));
    if (checks.includes("no-spurious-logout")) failures.push(...noSpuriousLogout(ledger, actors.filter(Boolean)));
    if (checks.includes("one-refresh-per-expiry") && refreshes !== expiries) {
      failures.push(`one-refresh-per-expiry: ${refreshes} refreshes for ${expiries} expiries`);
    }
  }
  if (run.expect.outcome === "ended" && failures.length === 0) {
    if (ledger && ledger.reuses.length === 0)
      failures.push(`expected outcome: the tenant was to end the session, and it saw no reuse`);
    if (!outcomes.has(run.expect.code))
      failures.push(
        `expected outcome: an actor was to report ${run.expect.code}; the calls ended with ${[...outcomes].join(", ")}`,
      );
  }
  if (checks.includes("secrets-hygiene")) {
    failures.push(...secretsHygiene(actors.filter(Boolean)));
    if (run.storage === "file") failures.push(...(await fileModes(storage.path)));
  }

  if (failures.length > 0 && ledger) failures.push(tenantSaw(ledger));
  await Promise.all(actors.filter(Boolean).map((actor) => actor.stop()));
  disk?.close();
  await rm(dir, { recursive: true, force: true });
  return {
    id: run.id,
    scenario: run.scenario,
    storage: run.storage,
    mix: run.mix,
    params: run.params,
    geometry: run.geometry,
    actors: run.actorTargets.length,
    runtimes: [...runtimes].sort(),
    passed: failures.length === 0,
    failures,
    expiries,
    refreshes,
    worstWaitMs: Math.round(worstWaitMs),
    ms: Math.round(performance.now() - started),
  };
}

/** The token file is 0600 in a 0700 directory (secrets hygiene). */
async function fileModes(path) {
  const failures = [];
  for (const [file, wanted] of [
    [path, 0o600],
    [dirname(path), 0o700],
  ]) {
    const info = await stat(file).catch(() => undefined);
    if (info && (info.mode & 0o777) !== wanted)
      failures.push(`secrets-hygiene: ${file} has mode ${(info.mode & 0o777).toString(8)}, not ${wanted.toString(8)}`);
  }
  return failures;
}
