// The steps of a scenario (spec/conformance/README.md, "A scenario"), each a named function of the
// run's state (run.mjs's `openRun`) and the step's body. A step that does not go as the scenario
// says throws a StepFailure; the run stops there.
import { ActorError } from "./actor.mjs";
import { records as postgresRecords } from "./postgres.mjs";
import { EXPIRE_SECONDS } from "./services.mjs";

/** A step that did not go as the scenario says; the run stops there. */
export class StepFailure extends Error {
  name = "StepFailure";
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The indexes of the live actors a selector names: `all`, `others` (all but actor 0) or a list. */
export function who(state, selector) {
  const all = state.actors.map((_, index) => index).filter((index) => state.alive.has(index));
  if (selector === "all") return all;
  if (selector === "others") return all.filter((index) => index !== 0);
  return selector;
}

/** An actor's answer in a few words, for a failure report. */
export function describeAnswer(answer) {
  return answer.ok
    ? `status ${answer.result.status}`
    : `${answer.error.code} (${answer.error.name ?? "Error"}: ${answer.error.message.slice(0, 200)})`;
}

/** What the sign-in and call commands carry: the run's sessions, when it has them (PROTOCOL.md, "Sessions"). */
export function carry(state) {
  return state.sessions ? { sessions: state.sessions } : {};
}

/** Sends a command that must succeed; its failure is a StepFailure naming the actor. */
export async function expectOk(state, actor, cmd, fields = {}) {
  const answer = await actor.request(cmd, fields, state.bound);
  if (!answer.ok)
    throw new StepFailure(`step ${state.current}: ${actor.describe()} failed "${cmd}": ${describeAnswer(answer)}`);
  return answer;
}

/**
 * Sends "call" to one actor and checks its answer against `expected` (the outcomes allowed: "200"
 * or error codes); records the outcome and the wait.
 */
async function callOne(state, index, expected, label) {
  const actor = state.actors[index];
  let answer;
  try {
    answer = await actor.request("call", carry(state), state.bound);
  } catch (error) {
    if (error instanceof ActorError && /did not answer/.test(error.message))
      throw new StepFailure(`bounded-waits: step ${label}: ${error.message}`);
    throw error;
  }
  if (answer.dropped) return;
  state.worstWaitMs = Math.max(state.worstWaitMs, answer.ms);
  const got = answer.ok ? String(answer.result.status) : answer.error.code;
  state.outcomes.add(got);
  const step = (state.calls[label] ??= { outcomes: {}, worstMs: 0 });
  step.outcomes[got] = (step.outcomes[got] ?? 0) + 1;
  step.worstMs = Math.max(step.worstMs, Math.round(answer.ms));
  if (!expected.includes(got))
    throw new StepFailure(
      `step ${label}: ${actor.describe()} was to end with ${expected.join(" or ")}, and ended with ${describeAnswer(answer)}`,
    );
  const crossed = answer.ok ? (answer.result.crossed ?? []) : [];
  if (crossed.length > 0)
    throw new StepFailure(
      `no-cross-talk: step ${label}: ${actor.describe()} was served another user's account for ${crossed.length} sessions: ${crossed
        .slice(0, 5)
        .map((c) => `session ${c.id} (user ${c.user}) got user ${c.got}`)
        .join(", ")}`,
    );
}

/** Moves the tenant's clock, and the clock of every actor that runs (a stopped one follows when it can). */
export async function moveClocks(state, seconds) {
  const { sandbox, run } = state;
  await sandbox.advance(seconds);
  await Promise.all(
    [...state.alive]
      .filter((index) => !state.stopped.has(index))
      .map((index) =>
        expectOk(state, state.actors[index], "clock", {
          offsetMs: sandbox.offsetMs + run.skewMs[index % run.skewMs.length],
        }),
      ),
  );
}

async function call(state, { actors: selector, wait = true, expect = "200" }) {
  const label = state.current;
  const allowed = [expect].flat().map(String);
  const calls = who(state, selector).map((index) => callOne(state, index, allowed, label));
  if (!wait) {
    state.pending.push(...calls.map((promise) => promise.catch((error) => error)));
    return;
  }
  const settled = await Promise.allSettled(calls);
  const failed = settled.find((outcome) => outcome.status === "rejected");
  if (failed) throw failed.reason;
}

/** Waits for every pending call; the first that failed fails the step. */
export async function awaitPending(state) {
  const outcomes = await Promise.all(state.pending.splice(0));
  const failed = outcomes.find((outcome) => outcome instanceof Error);
  if (failed) throw failed;
}

async function expire(state) {
  state.expiries++;
  await moveClocks(state, EXPIRE_SECONDS);
}

function arm(state, { actor, point, then }) {
  state.armedThen.set(actor, then);
  return expectOk(state, state.actors[actor], "arm", { point, then });
}

async function waitFor(state, { actor }) {
  const message = await state.actors[actor].waitEvent(
    (m) => m.event === "at",
    state.bound,
    "it reached its armed point",
    { seen: true },
  );
  // Only a `stop` leaves it stopped.
  if (state.armedThen.get(actor) === "stop") state.stopped.add(actor);
  return message;
}

function stop(state, { actor }) {
  state.stopped.add(actor);
  state.actors[actor].signal("SIGSTOP");
}

function resume(state, { actor }) {
  state.stopped.delete(actor);
  state.actors[actor].signal("SIGCONT");
}

async function kill(state, { actor }) {
  state.alive.delete(actor);
  state.stopped.delete(actor);
  await state.actors[actor].kill();
}

/**
 * The Redis key of the run's session tokens (spec/token-store/README.md, "Redis keys"):
 * `<prefix>tenant-integration:{<origin>:<clientId>}:tokens`.
 */
export function sessionKey(state) {
  const { storage, sandbox, env } = state;
  return `${storage.prefix ?? ""}tenant-integration:{${new URL(sandbox.url).origin}:${env.clientId}}:tokens`;
}

/**
 * A step on the run's own Redis: its redis-server, or on a cluster the primary that owns the
 * session's slot, found by one of its keys.
 */
const redis = (state, what) => state.env.redis[what](sessionKey(state));

/**
 * A `records` step (spec/conformance/README.md): `refuse` makes the run's storage refuse to write the
 * session's records (its refresh intent and its tokens) while every read and the refresh lock still
 * answer; `accept` undoes it. A token file holds both records in one file: its disk is full.
 */
function records(state, what) {
  const { run, env } = state;
  if (run.storage === "file") return what === "refuse" ? state.disk.full() : state.disk.writable();
  if (run.storage === "redis" || run.storage === "redis-cluster") return env.redis.records(what);
  if (run.storage === "postgres") return postgresRecords(env.postgresUrl, env.postgresTable, what);
  throw new StepFailure(`step ${state.current}: records steps do not apply to ${run.storage} storage`);
}

/**
 * Session ids an app's request could carry that would break a key (spec/token-store, "The session
 * id"): every kit refuses each with INVALID_SESSION_ID, before anything is read or written.
 */
export const ADVERSARIAL_IDS = [
  "",
  "a:b",
  "{1000}",
  "1000}",
  "../../etc/passwd",
  "a%3Ab",
  "ada lovelace",
  "x\r\nSET k v",
  "caf\u00e9",
  "*",
  "9".repeat(129),
];

/** The actor gives each adversarial id to its sessions object: every call must refuse it. */
async function refuseIds(state, { actor }) {
  const { result } = await expectOk(state, state.actors[actor], "refuse-ids", { ids: ADVERSARIAL_IDS });
  if (result.accepted?.length > 0 || result.refused !== ADVERSARIAL_IDS.length)
    throw new StepFailure(
      `step ${state.current}: ${state.actors[actor].describe()} refused ${result.refused} of ${ADVERSARIAL_IDS.length} ids that could break a key; it took ${JSON.stringify(result.accepted ?? [])}`,
    );
}

/** The actor completes an approved sign-in in another browser: refused before any exchange, used up. */
async function replayCallback(state, { actor }) {
  const { result } = await expectOk(state, state.actors[actor], "replay-callback", { user: state.sessions[0].user });
  const wanted = { refused: "STATE_MISMATCH", after: "NO_PENDING_SIGN_IN", signedIn: false };
  if (Object.entries(wanted).some(([key, value]) => result[key] !== value))
    throw new StepFailure(
      `step ${state.current}: a callback replayed in another browser: ${state.actors[actor].describe()} answered ${JSON.stringify(result)}, not ${JSON.stringify(wanted)}`,
    );
}

/** Each step kind's function, `(state, body)`. */
export const STEPS = {
  "sign-in": (state, { actor }) => expectOk(state, state.actors[actor], "sign-in", carry(state)),
  expire,
  call,
  await: awaitPending,
  arm,
  "wait-for": waitFor,
  stop,
  sleep: (state, name) => sleep(state.run.timing[name]),
  resume,
  kill,
  fault: (state, spec) => state.sandbox.addFault({ route: "/oauth/token", method: "POST", ...spec }),
  redis,
  // The run's own PostgreSQL: every step acts on the whole server.
  postgres: (state, what) => state.env.postgres[what](),
  disk: (state, what) => state.disk[what](),
  records,
  revoke: (state, { actor }) => expectOk(state, state.actors[actor], "revoke"),
  "sign-out": (state, { actor }) => expectOk(state, state.actors[actor], "sign-out"),
  "refuse-ids": refuseIds,
  "replay-callback": replayCallback,
};

/** The steps with repeats unrolled, each with its label ("3", "4.2.1"). */
export function unroll(steps, prefix = "") {
  return steps.flatMap((step, index) => {
    const [kind, body] = Object.entries(step)[0];
    const label = `${prefix}${index + 1}`;
    if (kind !== "repeat") return [{ kind, body, label }];
    return Array.from({ length: body.times }, (_, round) => unroll(body.steps, `${label}.${round + 1}.`)).flat();
  });
}

/** Runs the scenario's steps in order; `state.current` names the one under way, for reports. */
export async function runSteps(state) {
  for (const step of unroll(state.run.steps)) {
    state.current = `${step.label} (${step.kind})`;
    await STEPS[step.kind](state, step.body ?? {});
  }
  // A step left calls pending without an await: settle them before the invariants.
  await awaitPending(state);
}
