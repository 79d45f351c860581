// One actor as the orchestrator sees it: a process of one target speaking the line protocol of
// spec/conformance/PROTOCOL.md. Every line it prints is checked against the protocol; a wrong line,
// a crash or a hang is reported with the actor's name, target, pid and last lines.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { REPO } from "./scenarios.mjs";

const ACTORS = join(REPO, "tools", "conformance", "actors");
/** The Go actor, built by the Go module's `pnpm build` (packages/go/cmd/conformance-actor). */
const GO_ACTOR = join(REPO, "packages", "go", "bin", "conformance-actor");
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
  /** Every line it printed, stdout and stderr, for the secrets check. */
  const transcript = [];
  const last = [];
  const pending = new Map();
  const listeners = new Set();
  const events = [];
  let nextId = 1;
  let broken;
  let state = "running";
  const remember = (stream, line) => {
    transcript.push(line);
    last.push(`${stream}: ${line.slice(0, 300)}`);
    if (last.length > LAST_LINES) last.shift();
  };
  const describe = () => `actor ${name} (${target}, pid ${child.pid})`;
  const report = (why) => `${describe()} ${why} at step ${step()}; its last lines:\n  ${last.join("\n  ") || "(none)"}`;
  const failAll = (error) => {
    broken ??= error;
    for (const { reject } of pending.values()) reject(error);
    pending.clear();
    for (const listener of listeners) listener(undefined, error);
  };

  createInterface({ input: child.stderr }).on("line", (line) => remember("stderr", line));
  let lineNumber = 0;
  createInterface({ input: child.stdout }).on("line", (line) => {
    lineNumber++;
    remember("stdout", line);
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      message = undefined;
    }
    const violation = message === undefined ? "not JSON" : protocolViolation(message);
    if (violation) {
      failAll(
        new ActorError(
          report(
            `spoke the protocol wrongly: its output line ${lineNumber} (${JSON.stringify(line.slice(0, 120))}): ${violation}`,
          ),
        ),
      );
      return;
    }
    if ("event" in message) {
      events.push(message);
      for (const listener of listeners) listener(message);
      return;
    }
    const waiter = pending.get(message.id);
    if (!waiter) {
      failAll(
        new ActorError(
          report(
            `spoke the protocol wrongly: its output line ${lineNumber} answers id ${message.id}, which no command has (or had already)`,
          ),
        ),
      );
      return;
    }
    pending.delete(message.id);
    waiter.resolve(message);
  });
  const exited = new Promise((resolve) =>
    child.once("exit", (code, signal) => {
      const expected = state === "killed";
      state = "exited";
      if (!expected) failAll(new ActorError(report(`exited (${signal ?? `status ${code}`})`)));
      resolve();
    }),
  );
  child.once("error", (e) => failAll(new ActorError(report(`could not be started (${e.message})`))));
  child.stdin.on("error", () => {});

  /** Resolves with the first event that `match` accepts (also one already seen, if `seen`). */
  const waitEvent = (match, timeoutMs, what, { seen = false } = {}) => {
    const earlier = seen ? events.find(match) : undefined;
    if (earlier) return Promise.resolve(earlier);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => done(undefined, new ActorError(report(`did not say ${what} within ${timeoutMs} ms`))),
        timeoutMs,
      );
      const done = (message, error) => {
        if (!error && !match(message)) return;
        clearTimeout(timer);
        listeners.delete(done);
        if (error) reject(error);
        else resolve(message);
      };
      if (broken) return done(undefined, broken);
      listeners.add(done);
    });
  };

  const ready = await waitEvent((m) => m.event === "ready", READY_MS, "it was ready", { seen: true });

  return {
    name,
    target,
    pid: child.pid,
    runtime: ready.runtime,
    transcript,
    events,
    describe,
    report,
    /**
     * Sends a command; resolves with its answer, or rejects when the actor breaks, exits, or does
     * not answer within `timeoutMs`.
     */
    request(cmd, fields = {}, timeoutMs = 30_000) {
      if (broken) return Promise.reject(broken);
      const id = nextId++;
      const sentAt = performance.now();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new ActorError(report(`did not answer "${cmd}" within ${timeoutMs} ms`)));
        }, timeoutMs);
        pending.set(id, {
          resolve: (answer) => {
            clearTimeout(timer);
            resolve({ ...answer, ms: performance.now() - sentAt });
          },
          reject: (error) => {
            clearTimeout(timer);
            reject(error);
          },
        });
        child.stdin.write(`${JSON.stringify({ id, cmd, ...fields })}\n`);
      });
    },
    waitEvent,
    signal(name) {
      if (state === "running") child.kill(name);
    },
    /** Kills it (SIGKILL); its pending commands are dropped without an error. */
    async kill() {
      if (state === "running") {
        state = "killed";
        for (const { resolve } of pending.values()) resolve({ dropped: true });
        pending.clear();
        child.kill("SIGCONT");
        child.kill("SIGKILL");
      }
      await exited;
    },
    /** Asks it to exit; kills it if it has not within `graceMs`. */
    async stop(graceMs = 3_000) {
      if (state !== "running") return exited;
      state = "killed";
      for (const { resolve } of pending.values()) resolve({ dropped: true });
      pending.clear();
      child.kill("SIGCONT");
      child.stdin.write(`${JSON.stringify({ id: nextId++, cmd: "exit" })}\n`);
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    },
    /** The error that broke it, if one did. */
    broken: () => broken,
  };
}
