// Where bench processes run: on a machine with two cores or more and `taskset`, the load (the
// client, the load generator) runs on core 0 and the server on core 1, so the two never take
// turns on one core; elsewhere both run unpinned. Used by client-overhead.mjs and sandbox-throughput.mjs.
import { spawn, spawnSync } from "node:child_process";
import { cpus } from "node:os";

const hasTaskset = cpus().length >= 2 && spawnSync("taskset", ["-c", "0", "true"]).status === 0;

/** How processes are placed, for the printed figure. */
export const placement = hasTaskset ? "load on core 0, server on core 1 (taskset)" : "unpinned (no taskset or one core)";

/** Spawns `node <args>` on `core` ("load" or "server") when pinning is available. */
export function spawnNode(core, args, options) {
  if (!hasTaskset) return spawn(process.execPath, args, options);
  return spawn("taskset", ["-c", core === "load" ? "0" : "1", process.execPath, ...args], options);
}

/**
 * Starts server-process.mjs in `mode` on the server core; resolves what it prints (its `url`, and the
 * token in the sandbox modes) with its `pid` (node's own: taskset execs it) and `stop()`.
 */
export async function startServerProcess(mode) {
  const script = new URL("./server-process.mjs", import.meta.url).pathname;
  const child = spawnNode("server", [script, mode], { stdio: ["ignore", "pipe", "inherit"] });
  const info = await new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line) resolve(JSON.parse(line));
    });
    child.on("exit", (code) => reject(new Error(`${mode} server exited (${code})`)));
  });
  return { ...info, pid: child.pid, stop: () => child.kill("SIGTERM") };
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

/** `xs` in a random order (Fisher–Yates). */
export function shuffled(xs) {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

export const median = (xs) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  return sorted.length % 2 === 1 ? sorted[Math.floor(mid)] : (sorted[mid - 1] + sorted[mid]) / 2;
};
