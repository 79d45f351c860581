// Where bench processes run: on a machine with two cores or more and `taskset`, the load (the
// client, the load generator) runs on core 0 and the server on core 1, so the two never take
// turns on one core; elsewhere both run unpinned. Used by client-overhead.mjs and sandbox-throughput.mjs.
import { spawn, spawnSync } from "node:child_process";
import { cpus } from "node:os";
import { createInterface } from "node:readline";

const hasTaskset = cpus().length >= 2 && spawnSync("taskset", ["-c", "0", "true"]).status === 0;

/** How processes are placed, for the printed figure. */
export const placement = hasTaskset
  ? "load on core 0, server on core 1 (taskset)"
  : "unpinned (no taskset or one core)";

/** Spawns `node <args>` on `core` ("load" or "server") when pinning is available. */
export function spawnNode(core, args, options) {
  if (!hasTaskset) return spawn(process.execPath, args, options);
  return spawn("taskset", ["-c", core === "load" ? "0" : "1", process.execPath, ...args], options);
}

/**
 * Starts server-process.mjs in `mode` on the server core; resolves what it prints (its `url`, and the
 * token in the sandbox modes) with its `pid` (node's own: taskset execs it), `cpuMicros()` (its CPU
 * time so far, in µs, as it measures it) and `stop()`.
 */
export async function startServerProcess(mode) {
  const script = new URL("./server-process.mjs", import.meta.url).pathname;
  const child = spawnNode("server", [script, mode], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout });
  const waiting = [];
  const info = await new Promise((resolve, reject) => {
    lines.on("line", (line) => {
      if (!line.startsWith("{")) return;
      const message = JSON.parse(line);
      if ("cpuMicros" in message) waiting.shift()?.(message.cpuMicros);
      else resolve(message);
    });
    child.on("exit", (code) => reject(new Error(`${mode} server exited (${code})`)));
  });
  return {
    ...info,
    pid: child.pid,
    cpuMicros: () =>
      new Promise((resolve) => {
        waiting.push(resolve);
        child.stdin.write("cpu\n");
      }),
    stop: () => child.kill("SIGTERM"),
  };
}

/** Runs `node <args>` on the load core and resolves its stdout's first JSON line. */
export function runJson(args) {
  return new Promise((resolve, reject) => {
    const child = spawnNode("load", args, { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    child.on("exit", (code) => {
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (code === 0 && line) resolve(JSON.parse(line));
      else reject(new Error(`${args.join(" ")} exited with ${code}`));
    });
  });
}

export { median, shuffled } from "./stats.mjs";
