// One actor as the orchestrator sees it: a process of one target speaking the line protocol of
// spec/conformance/PROTOCOL.md. Every line it prints is checked against the protocol; a wrong line,
// a crash or a hang is reported with the actor's name, target, pid and last lines.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { REPO } from "./scenarios.mjs";

const ACTORS = join(REPO, "tools", "conformance", "actors");
/**
 * The Go actor, built by the Go module's `pnpm build` (packages/go/cmd/conformance-actor); or another
 * build of it, named by CONFORMANCE_GO_ACTOR (a branch's, to compare).
 */
const GO_ACTOR = process.env.CONFORMANCE_GO_ACTOR || join(REPO, "packages", "go", "bin", "conformance-actor");
/** The Java actor's command (the java that built it and its argument file), written by packages/java's `pnpm build`. */
const JAVA_ACTOR = join(REPO, "packages", "java", "conformance-actor", "target", "actor-command.json");
/** How many of an actor's last lines a failure report quotes. */
const LAST_LINES = 12;
/** How long an actor may take to say it is ready (a Python interpreter and a browser tab included, on a busy machine). */
const READY_MS = 60_000;

/** The Python of the repository's venv (made by tools/python/venv.mjs), or undefined. */
export function venvPython() {
  const python = join(REPO, ".venv", "bin", "python");
  return existsSync(python) ? python : undefined;
}

/** The command that starts an actor of each target. */
export function defaultCommands() {
  const python = venvPython();
  return {
    node: [process.execPath, join(ACTORS, "node", "actor.mjs")],
    python: python && [python, join(ACTORS, "python", "actor.py")],
    "python-async": python && [python, join(ACTORS, "python", "actor.py")],
    browser: [process.execPath, join(ACTORS, "browser", "actor.mjs")],
    // The built binary itself, never a wrapper: the orchestrator signals the pid it started.
    go: existsSync(GO_ACTOR) ? [GO_ACTOR] : undefined,
    java: existsSync(JAVA_ACTOR) ? JSON.parse(readFileSync(JAVA_ACTOR, "utf8")) : undefined,
  };
}

/** An actor that broke the protocol, crashed, or did not answer in time. */
export class ActorError extends Error {
  name = "ActorError";
}

const EVENTS = new Set(["ready", "at", "session", "log"]);

/** Why a line breaks the protocol, or undefined when it is a valid line. */
export function protocolViolation(message) {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return "not a JSON object";
  if ("event" in message) {
    if (!EVENTS.has(message.event))
      return `unknown event "${String(message.event).slice(0, 40)}" (events: ${[...EVENTS].join(", ")})`;
    if (message.event === "at" && typeof message.point !== "string") return `"at" without a string "point"`;
    if (message.event === "session" && typeof message.what !== "string") return `"session" without a string "what"`;
    if (message.event === "log" && (typeof message.level !== "string" || typeof message.message !== "string"))
      return `"log" needs string "level" and "message"`;
    if (message.event === "ready" && !Number.isInteger(message.pid)) return `"ready" without an integer "pid"`;
    return undefined;
  }
  if (!Number.isInteger(message.id))
    return `an answer needs an integer "id" (or the line is an event and needs "event")`;
  if (message.ok === true)
    return typeof message.result === "object" && message.result !== null
      ? undefined
      : `an ok answer needs an object "result"`;
  if (message.ok === false) {
    const error = message.error;
    if (
      typeof error !== "object" ||
      error === null ||
      typeof error.code !== "string" ||
      typeof error.message !== "string"
    ) {
      return `a failed answer needs "error" with string "code" and "message"`;
    }
    return undefined;
  }
  return `an answer needs "ok": true or false`;
}

/**
 * An actor's state: its process, every line it printed, the commands awaiting an answer, the events
 * it said and who waits for them, and what broke it.
 */
function actorState({ name, target, child, step }) {
  return {
    name,
    target,
    child,
    step,
    /** Every line it printed, stdout and stderr, for the secrets check. */
    transcript: [],
    /** Its last lines, for a failure report. */
    last: [],
    /** Commands awaiting an answer, by id. */
    pending: new Map(),
    listeners: new Set(),
    events: [],
    nextId: 1,
    lineNumber: 0,
    /** The error that broke it, once one did. */
    broken: undefined,
    /** "running", "closing" (asked to exit), "killed" (by the orchestrator, on purpose) or "exited". */
    state: "running",
    /** How it exited, once it did: `{ code, signal }`. */
    exit: undefined,
  };
}

const describe = (actor) => `actor ${actor.name} (${actor.target}, pid ${actor.child.pid})`;

/** Why it failed, at which step, with its last lines. */
function report(actor, why) {
  return `${describe(actor)} ${why} at step ${actor.step()}; its last lines:\n  ${actor.last.join("\n  ") || "(none)"}`;
}

function remember(actor, stream, line) {
  actor.transcript.push(line);
  actor.last.push(`${stream}: ${line.slice(0, 300)}`);
  if (actor.last.length > LAST_LINES) actor.last.shift();
}

/** The actor is broken: every pending command and every waiter fails with `error`. */
function failAll(actor, error) {
  actor.broken ??= error;
  for (const { reject } of actor.pending.values()) reject(error);
  actor.pending.clear();
  for (const listener of actor.listeners) listener(undefined, error);
}

/** One line of its standard output: an event, an answer to a pending command, or a protocol error. */
function onOutputLine(actor, line) {
  actor.lineNumber++;
  remember(actor, "stdout", line);
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    message = undefined;
  }
  const violation = message === undefined ? "not JSON" : protocolViolation(message);
  const wrong = (why) =>
    failAll(
      actor,
      new ActorError(report(actor, `spoke the protocol wrongly: its output line ${actor.lineNumber} ${why}`)),
    );
  if (violation) return wrong(`(${JSON.stringify(line.slice(0, 120))}): ${violation}`);
  if ("event" in message) {
    actor.events.push(message);
    for (const listener of actor.listeners) listener(message);
    return;
  }
  const waiter = actor.pending.get(message.id);
  if (!waiter) return wrong(`answers id ${message.id}, which no command has (or had already)`);
  actor.pending.delete(message.id);
  waiter.resolve(message);
}

/** Resolves with the first event that `match` accepts (also one already seen, if `seen`). */
function waitEvent(actor, match, timeoutMs, what, { seen = false } = {}) {
  const earlier = seen ? actor.events.find(match) : undefined;
  if (earlier) return Promise.resolve(earlier);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => done(undefined, new ActorError(report(actor, `did not say ${what} within ${timeoutMs} ms`))),
      timeoutMs,
    );
    const done = (message, error) => {
      if (!error && !match(message)) return;
      clearTimeout(timer);
      actor.listeners.delete(done);
      if (error) reject(error);
      else resolve(message);
    };
    if (actor.broken) return done(undefined, actor.broken);
    actor.listeners.add(done);
  });
}

/**
 * Sends a command; resolves with its answer (and `ms`, how long it took), or rejects when the actor
 * breaks, exits, or does not answer within `timeoutMs`.
 */
function request(actor, cmd, fields = {}, timeoutMs = 30_000) {
  if (actor.broken) return Promise.reject(actor.broken);
  const id = actor.nextId++;
  const sentAt = performance.now();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      actor.pending.delete(id);
      reject(new ActorError(report(actor, `did not answer "${cmd}" within ${timeoutMs} ms`)));
    }, timeoutMs);
    actor.pending.set(id, {
      resolve: (answer) => {
        clearTimeout(timer);
        resolve({ ...answer, ms: performance.now() - sentAt });
      },
      reject: (error) => {
        clearTimeout(timer);
        reject(error);
      },
    });
    actor.child.stdin.write(`${JSON.stringify({ id, cmd, ...fields })}\n`);
  });
}

/** Drops its pending commands (resolved as dropped, not failed): it is being killed or stopped on purpose. */
function dropPending(actor) {
  actor.state = "killed";
  for (const { resolve } of actor.pending.values()) resolve({ dropped: true });
  actor.pending.clear();
}

/** Kills it (SIGKILL); its pending commands are dropped without an error. */
async function kill(actor) {
  if (actor.state === "running") {
    dropPending(actor);
    actor.child.kill("SIGCONT");
    actor.child.kill("SIGKILL");
  }
  await actor.exited;
}

/** Asks it to exit; kills it if it has not within `graceMs`. */
async function stop(actor, graceMs = 3_000) {
  if (actor.state !== "running") return actor.exited;
  dropPending(actor);
  actor.child.kill("SIGCONT");
  actor.child.stdin.write(`${JSON.stringify({ id: actor.nextId++, cmd: "exit" })}\n`);
  const timer = setTimeout(() => actor.child.kill("SIGKILL"), graceMs);
  await actor.exited;
  clearTimeout(timer);
}

/**
 * Closes it as a user's process ends its work: asks it to exit (it closes its manager, its sessions
 * and its clients, PROTOCOL.md `exit`) and waits for its answer and its exit, `boundMs` at most from
 * the command. Resolves with why the close was not clean (undefined when it was): the actor said its
 * close failed, it exited without answering or with a status other than 0, or it was still running
 * after `boundMs` (a beat, a retried write or a client left open keeps it alive), in which case it is
 * killed. Its other pending commands are dropped.
 */
async function close(actor, boundMs) {
  if (actor.state !== "running") return undefined;
  dropPending(actor);
  actor.state = "closing";
  const id = actor.nextId++;
  const answered = new Promise((resolve) => actor.pending.set(id, { resolve, reject: () => resolve(undefined) }));
  actor.child.stdin.write(`${JSON.stringify({ id, cmd: "exit" })}\n`);
  let timer;
  const inTime = await Promise.race([
    actor.exited.then(() => true),
    new Promise((resolve) => {
      timer = setTimeout(() => resolve(false), boundMs);
    }),
  ]);
  clearTimeout(timer);
  if (!inTime) {
    actor.child.kill("SIGKILL");
    await actor.exited;
    return `was still running ${boundMs} ms after its exit command (something its close left running keeps it alive)`;
  }
  if (actor.pending.has(id)) await Promise.race([actor.outputRead, new Promise((r) => setTimeout(r, 1_000))]);
  const answer = actor.pending.has(id) ? undefined : await answered;
  actor.pending.delete(id);
  if (!answer) return `exited (${actor.exit.signal ?? `status ${actor.exit.code}`}) without answering its exit command`;
  if (answer.ok === false) return `said its close failed: ${answer.error.code}: ${answer.error.message}`;
  if (actor.exit.code !== 0) return `exited with ${actor.exit.signal ?? `status ${actor.exit.code}`} after its close`;
  return undefined;
}

/** Reads its output and notices its exit: an exit the orchestrator did not ask for breaks it. */
function watchProcess(actor) {
  const { child } = actor;
  createInterface({ input: child.stderr }).on("line", (line) => remember(actor, "stderr", line));
  const output = createInterface({ input: child.stdout }).on("line", (line) => onOutputLine(actor, line));
  /** Its standard output read to the end (the exit event may come before its last lines). */
  actor.outputRead = new Promise((resolve) => output.once("close", resolve));
  actor.exited = new Promise((resolve) =>
    child.once("exit", (code, signal) => {
      const expected = actor.state !== "running";
      actor.state = "exited";
      actor.exit = { code, signal };
      if (!expected) failAll(actor, new ActorError(report(actor, `exited (${signal ?? `status ${code}`})`)));
      resolve();
    }),
  );
  child.once("error", (e) => failAll(actor, new ActorError(report(actor, `could not be started (${e.message})`))));
  child.stdin.on("error", () => {});
}

/**
 * Starts an actor and resolves once it says it is ready.
 *
 * @param {{ name: string, target: string, config: object, command: string[], step: () => string }} options
 *   `step` tells the current step, for reports.
 */
export async function startActor({ name, target, config, command, step }) {
  const child = spawn(command[0], command.slice(1), {
    env: { ...process.env, CONFORMANCE_ACTOR: JSON.stringify({ ...config, name, target }) },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const actor = actorState({ name, target, child, step });
  watchProcess(actor);
  let ready;
  try {
    ready = await waitEvent(actor, (m) => m.event === "ready", READY_MS, "it was ready", { seen: true });
  } catch (error) {
    // Nobody can stop an actor that never said it was ready: kill it here, not leave it running
    // (not awaiting its exit: a process that could not be spawned has none).
    if (actor.state === "running") {
      dropPending(actor);
      child.kill("SIGKILL");
    }
    throw error;
  }
  return {
    name,
    target,
    pid: child.pid,
    runtime: ready.runtime,
    /** The features its actor declares in its ready event (PROTOCOL.md, "Start"), e.g. `sessions`. */
    features: Array.isArray(ready.features) ? ready.features : [],
    transcript: actor.transcript,
    events: actor.events,
    describe: () => describe(actor),
    report: (why) => report(actor, why),
    request: (cmd, fields, timeoutMs) => request(actor, cmd, fields, timeoutMs),
    waitEvent: (match, timeoutMs, what, options) => waitEvent(actor, match, timeoutMs, what, options),
    signal(signalName) {
      if (actor.state === "running") child.kill(signalName);
    },
    kill: () => kill(actor),
    stop: (graceMs) => stop(actor, graceMs),
    close: (boundMs) => close(actor, boundMs),
    /** The error that broke it, if one did. */
    broken: () => actor.broken,
  };
}
