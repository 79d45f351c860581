// One run: a scenario's steps on one storage with one actor mix, then its invariants. The run
// drives real processes (the actors), the real sandbox and a real redis-server; it never hangs:
// every wait has a bound, and every process it started is stopped when it ends, pass or fail.
//
// `runScenario` is the run in named steps: open it (`openRun`), start the actors, run the steps,
// let a fresh actor continue the session, check the invariants, close it, and say what it found.
import { mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { ActorError, startActor } from "./actor.mjs";
import {
  invariantsFor,
  noSpuriousLogout,
  refreshCount,
  refreshesPerSession,
  requestHeaders,
  secretsHygiene,
  singleRedemption,
  tenantSaw,
} from "./invariants.mjs";
import { EXPIRE_SECONDS, startDisk } from "./services.mjs";
import { carry, describeAnswer, moveClocks, runSteps, StepFailure } from "./steps.mjs";

/** How many actors start at once. */
const START_BATCH = 10;
/**
 * How long an actor may take to close and exit after its `exit` command (clean-exit): closing sends
 * nothing, so this is an interpreter's or a JVM's teardown on a busy machine. A beat or a retried
 * write left running repeats every second or so and keeps a process alive past any bound.
 */
const EXIT_BOUND_MS = 10_000;

/** The storage an actor of this run is given (PROTOCOL.md, "Start"). */
function storageConfig(run, env, dir) {
  const lock = env.noLock ? { lock: "none" } : {};
  const stale = run.timing.staleMs;
  const lease = stale ? { leaseMs: stale } : {};
  const prefix = `conformance:${env.runNumber}:`;
  switch (run.storage) {
    case "file":
      // A directory the kit must create, so that its mode is the kit's (0700).
      return { kind: "file", path: join(dir, "state", "tokens.json"), ...(stale ? { staleMs: stale } : {}), ...lock };
    case "redis":
      return { kind: "redis", url: env.redisUrl, prefix, ...lease, ...lock };
    case "redis-cluster":
      // The cluster's nodes are the client's seeds; the run's keys share one hash slot (the kits' key scheme).
      return { kind: "redis-cluster", urls: env.redisClusterUrls, prefix, ...lease, ...lock };
    case "postgres":
      // The run's own table of the shared schema, on its server; the lock is the kit's advisory lock.
      return { kind: "postgres", url: env.postgresUrl, table: env.postgresTable, ...lock };
    default:
      return { kind: run.storage, ...lock };
  }
}

/** The manager options a scenario's timing sets (PROTOCOL.md, "Start": `manager`). */
function managerOptions(timing) {
  const options = {};
  for (const name of ["requestTimeoutMs", "intentWaitMs", "lockWaitMs"])
    if (timing[name] !== undefined) options[name] = timing[name];
  return options;
}

/**
 * The state of one run, which every step reads and changes: the run and its services, the actors
 * (and which are alive, which stopped), the calls left pending, and what was found so far.
 */
async function openRun(run, env) {
  const dir = await mkdtemp(join(tmpdir(), "conformance-"));
  await env.sandbox.reset();
  const storage = storageConfig(run, env, dir);
  return {
    run,
    env,
    sandbox: env.sandbox,
    started: performance.now(),
    dir,
    storage,
    bound: run.timing.waitBoundMs,
    /** The step under way, for reports. */
    current: "start",
    actors: [],
    alive: new Set(),
    stopped: new Set(),
    pending: [],
    failures: [],
    /** Every outcome a call ended with ("200" or an error code), for the ended outcome's check. */
    outcomes: new Set(),
    /** Per call step (its label), how many calls ended with each outcome and the longest one took. */
    calls: {},
    expiries: 0,
    worstWaitMs: 0,
    /** What each armed actor does at its point: only a `stop` leaves it stopped. */
    armedThen: new Map(),
    runtimes: new Set(),
    // Disk faults: the token file's directory is a tmpfs of the run's own.
    disk: run.disk ? await startDisk(dirname(storage.path)) : undefined,
    ledger: undefined,
    /** The run's sessions (a scenario with `sessions`): `{ id, user }`, each signed in as a user of its own. */
    sessions: undefined,
  };
}

/** The configuration of actor `index` (PROTOCOL.md, "Start"). */
function actorConfig(state, index) {
  const { run, env, sandbox } = state;
  const web = run.storage === "web";
  return {
    tenant: sandbox.url,
    clientId: env.clientId,
    redirectUri: web ? env.browser.redirectUri : env.redirectUri,
    scopes: ["profile:read"],
    storage: state.storage,
    clockOffsetMs: sandbox.offsetMs + run.skewMs[index % run.skewMs.length],
    manager: managerOptions(run.timing),
    ...(web ? { browser: { cdpEndpoint: env.browser.cdpEndpoint, pageUrl: env.browser.pageUrl } } : {}),
  };
}

function spawnActor(state, index, target, name) {
  return startActor({
    name,
    target,
    config: actorConfig(state, index),
    command: state.env.commands[target],
    step: () => state.current,
  });
}

/**
 * Starts the run's actors, in batches: a hundred interpreters started at once on two cores would
 * each take most of a minute. Fails when one does not start (those that did are stopped by closeRun).
 */
async function startActors(state) {
  const targets = state.run.actorTargets;
  const started = [];
  for (let first = 0; first < targets.length; first += START_BATCH) {
    const batch = targets.slice(first, first + START_BATCH);
    started.push(
      ...(await Promise.allSettled(
        batch.map((target, offset) => spawnActor(state, first + offset, target, `a${first + offset}`)),
      )),
    );
  }
  for (const [index, outcome] of started.entries()) {
    if (outcome.status !== "fulfilled") continue;
    state.actors[index] = outcome.value;
    state.alive.add(index);
    state.runtimes.add(outcome.value.runtime);
  }
  const failedStart = started.find((outcome) => outcome.status === "rejected");
  if (failedStart) throw failedStart.reason;
  if (state.run.sessions > 0) {
    state.current = "start (sessions)";
    state.sessions = await runSessions(state);
  }
}

/**
 * The sessions of a run of many (`run.sessions`): `{ id, user }`, session i signed in as the
 * sandbox's user i, with ids of the shapes apps use (e-mail addresses, numbers, `auth0|…`
 * subjects). Every actor must declare the sessions feature.
 */
async function runSessions({ run, actors, sandbox }) {
  for (const actor of actors)
    if (!actor.features.includes("sessions"))
      throw new StepFailure(`${actor.describe()} does not declare the sessions feature this scenario needs`);
  const users = await sandbox.users();
  if (users.length < run.sessions)
    throw new StepFailure(`the sandbox has ${users.length} users for ${run.sessions} sessions`);
  const shapes = [(i) => `user.${i}@example.org`, (i) => String(1_000_000 + i), (i) => `auth0|${i.toString(16)}`];
  return users.slice(0, run.sessions).map((user, i) => ({ id: shapes[i % shapes.length](i), user }));
}

/**
 * No lost rotation: after the steps, a fresh actor (of another target in a mixed run) continues the
 * session from the storage after one more expiry.
 */
async function continueFresh(state) {
  const { run } = state;
  if (!invariantsFor(run).includes("no-lost-rotation") || run.storage === "memory") return;
  state.current = "the fresh actor (no-lost-rotation)";
  const targets = [...new Set(run.actorTargets)];
  const target = targets[(targets.indexOf(run.actorTargets[0]) + 1) % targets.length];
  const fresh = await spawnActor(state, state.actors.length, target, "fresh");
  state.actors.push(fresh);
  state.alive.add(state.actors.length - 1);
  state.expiries++;
  await moveClocks(state, EXPIRE_SECONDS);
  const answer = await fresh.request("call", carry(state), state.bound);
  if (!answer.ok || answer.result.status !== 200)
    state.failures.push(
      `no-lost-rotation: a fresh ${target} actor could not continue the session from the storage: ${describeAnswer(answer)}`,
    );
  else if ((answer.result.crossed ?? []).length > 0)
    state.failures.push(
      `no-cross-talk: a fresh ${target} actor was served another user's account for ${answer.result.crossed.length} sessions`,
    );
}

/**
 * Clean exit: every actor that runs (not killed, not left stopped) is closed as a user's process
 * ends, and must close its manager without an error and exit with status 0 within
 * {@link EXIT_BOUND_MS} (the run's `timing.exitBoundMs`, which only the orchestrator's tests set). Run after the steps, so that the fresh actor then continues a session its
 * predecessors closed; and after the fresh actor.
 */
async function closeActors(state) {
  if (!invariantsFor(state.run).includes("clean-exit")) return;
  state.current = "closing the actors (clean-exit)";
  const closing = [...state.alive].filter((index) => !state.stopped.has(index));
  const bound = state.run.timing.exitBoundMs ?? EXIT_BOUND_MS;
  const outcomes = await Promise.all(closing.map((index) => state.actors[index].close(bound)));
  for (const [n, index] of closing.entries()) {
    state.alive.delete(index);
    if (outcomes[n]) state.failures.push(`clean-exit: ${state.actors[index].report(outcomes[n])}`);
  }
}

/** A failure of the steps, as a report line. */
function stepFailure(state, error) {
  return error instanceof StepFailure || error instanceof ActorError
    ? error.message
    : `step ${state.current}: ${error?.stack ?? error}`;
}

/** The invariants of the run's outcome, from the tenant's ledger and what the actors said. */
async function checkInvariants(state) {
  const { run, failures } = state;
  const actors = state.actors.filter(Boolean);
  try {
    state.ledger = await state.sandbox.ledger();
  } catch (error) {
    failures.push(`the ledger could not be read: ${error.message}`);
  }
  const { ledger } = state;
  const checks = invariantsFor(run);
  if (ledger) {
    if (checks.includes("single-redemption")) failures.push(...singleRedemption(ledger));
    if (checks.includes("no-spurious-logout")) failures.push(...noSpuriousLogout(ledger, actors));
    const refreshes = refreshCount(ledger);
    if (checks.includes("one-refresh-per-expiry") && state.sessions)
      failures.push(...refreshesPerSession(ledger, state.sessions.length, state.expiries));
    else if (checks.includes("one-refresh-per-expiry") && refreshes !== state.expiries)
      failures.push(`one-refresh-per-expiry: ${refreshes} refreshes for ${state.expiries} expiries`);
  }
  if (run.expect.outcome === "ended" && failures.length === 0) failures.push(...endedAsExpected(state));
  if (checks.includes("secrets-hygiene")) {
    failures.push(...secretsHygiene(actors));
    if (run.storage === "file") failures.push(...(await fileModes(state.storage.path)));
  }
  if (checks.includes("request-headers")) {
    try {
      failures.push(...requestHeaders(await state.sandbox.requests(), actors));
    } catch (error) {
      failures.push(`the request log could not be read: ${error.message}`);
    }
  }
  if (failures.length > 0 && ledger) failures.push(tenantSaw(ledger));
}

/** The `ended` outcome: the tenant saw a reuse, and an actor reported the scenario's code. */
function endedAsExpected({ run, ledger, outcomes }) {
  const failures = [];
  if (ledger && ledger.reuses.length === 0)
    failures.push(`expected outcome: the tenant was to end the session, and it saw no reuse`);
  if (!outcomes.has(run.expect.code))
    failures.push(
      `expected outcome: an actor was to report ${run.expect.code}; the calls ended with ${[...outcomes].join(", ")}`,
    );
  return failures;
}

/**
 * Writes every actor's transcript (each line it printed) to `<dir>/<run number>-<actor>.log`, for a
 * reader of a failed run (CONFORMANCE_TRANSCRIPTS=<dir>, or the command line's --transcripts).
 */
async function keepTranscripts(state, dir) {
  await mkdir(dir, { recursive: true });
  for (const actor of state.actors.filter(Boolean))
    await writeFile(join(dir, `${state.env.runNumber}-${actor.name}.log`), `${actor.transcript.join("\n")}\n`);
}

/** Stops every actor and the run's disk, and removes its directory. */
async function closeRun(state) {
  await Promise.all(state.actors.filter(Boolean).map((actor) => actor.stop()));
  if (process.env.CONFORMANCE_TRANSCRIPTS) await keepTranscripts(state, process.env.CONFORMANCE_TRANSCRIPTS);
  await state.disk?.close();
  await rm(state.dir, { recursive: true, force: true });
}

/** What the run found, for the matrix. */
function resultOf(state) {
  const { run, ledger } = state;
  return {
    id: run.id,
    scenario: run.scenario,
    storage: run.storage,
    mix: run.mix,
    params: run.params,
    geometry: run.geometry,
    actors: run.actorTargets.length,
    sessions: state.sessions?.length ?? 0,
    runtimes: [...state.runtimes].sort(),
    passed: state.failures.length === 0,
    failures: state.failures,
    // With sessions, each session expires at each expiry: the refreshes are counted against those.
    expiries: state.expiries * (state.sessions?.length || 1),
    refreshes: ledger ? refreshCount(ledger) : undefined,
    worstWaitMs: Math.round(state.worstWaitMs),
    calls: state.calls,
    ms: Math.round(performance.now() - state.started),
  };
}

/**
 * Runs one expanded run.
 *
 * @param {object} run from expand()
 * @param {{ sandbox: object, clientId: string, redirectUri: string, commands: object, redisUrl?: string, redisClusterUrls?: string[],
 *   redis?: { restart(key: string): Promise<void> }, postgresUrl?: string, postgresTable?: string,
 *   postgres?: { restart(): Promise<void> }, browser?: object, runNumber: number, noLock?: boolean }} env
 *   `redis` is the run's own redis-server or Redis Cluster, for its redis steps (given the session's key);
 *   `postgres` the run's own PostgreSQL, for its postgres steps.
 * @returns {Promise<object>} the run's result: passed, failures, refreshes per expiry, worst wait…
 */
export async function runScenario(run, env) {
  const state = await openRun(run, env);
  try {
    await startActors(state);
    await runSteps(state);
    await closeActors(state);
    await continueFresh(state);
    await closeActors(state);
  } catch (error) {
    state.failures.push(stepFailure(state, error));
  }
  await checkInvariants(state);
  await closeRun(state);
  return resultOf(state);
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
