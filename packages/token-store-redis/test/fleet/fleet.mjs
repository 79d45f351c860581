// Starts and drives fleets of child.mjs processes (see there for the protocol). Shared by
// test/fleet.test.ts and tools/bench/redis-fleet.mjs.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const CHILD = fileURLToPath(new URL("child.mjs", import.meta.url));

/** Starts one member; its messages are queued until a `next()` takes them. */
export function startMember(env) {
  const child = spawn(process.execPath, [CHILD], { env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
  const queue = [];
  const waiting = [];
  let stderr = "";
  let exit;
  const deliver = (message) => (waiting.length ? waiting.shift().resolve(message) : queue.push(message));
  createInterface({ input: child.stdout }).on("line", (line) => deliver(JSON.parse(line)));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  child.once("exit", (code, signal) => {
    exit = { code, signal };
    for (const w of waiting.splice(0)) w.reject(new Error(`fleet member ${child.pid} exited (${signal ?? code}) ${stderr}`));
  });
  return {
    pid: child.pid,
    /** The next message, or a rejection when the process exits or `timeoutMs` passes first. */
    next(timeoutMs = 120_000) {
      if (queue.length) return Promise.resolve(queue.shift());
      if (exit) return Promise.reject(new Error(`fleet member ${child.pid} exited (${exit.signal ?? exit.code}) ${stderr}`));
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`fleet member ${child.pid} said nothing for ${timeoutMs} ms ${stderr}`)), timeoutMs);
        waiting.push({ resolve: (m) => (clearTimeout(timer), resolve(m)), reject: (e) => (clearTimeout(timer), reject(e)) });
      });
    },
    send(command) {
      child.stdin.write(`${JSON.stringify(command)}\n`);
    },
    kill(signal = "SIGKILL") {
      child.kill(signal);
    },
    exited: new Promise((resolve) => (exit ? resolve(exit) : child.once("exit", (code, signal) => resolve({ code, signal })))),
  };
}

/** Starts `size` members and resolves once every one printed "ready" (each warmed up on its own). */
export async function startFleet(size, env) {
  const members = Array.from({ length: size }, () => startMember(env));
  try {
    for (const m of members) {
      const message = await m.next();
      if (!message.ready) throw new Error(`fleet member ${m.pid} did not get ready: ${JSON.stringify(message)}`);
    }
  } catch (e) {
    await stopFleet(members);
    throw e;
  }
  return members;
}

/** Sends `command` to every member back to back (one write each, no await between), then collects one result each. */
export async function releaseTogether(members, command) {
  for (const m of members) m.send(command);
  const messages = await Promise.all(members.map((m) => m.next()));
  return messages.map((message) => message.result);
}

/** Asks every member still running to exit, then kills what remains, and waits for all of them. */
export async function stopFleet(members) {
  for (const m of members) {
    try {
      m.send({ exit: true });
    } catch {
      /* already gone */
    }
  }
  const timer = setTimeout(() => members.forEach((m) => m.kill()), 10_000);
  await Promise.all(members.map((m) => m.exited));
  clearTimeout(timer);
}
