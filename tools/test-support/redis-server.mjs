// A throwaway redis-server for tests, the conformance suite and benchmarks: found on this machine,
// started on a free loopback port with no persistence (no RDB, no AOF) unless `args` ask for it, and
// stopped by its pid. The conformance suite's steps on it (outages, ACLs) and its cluster are built
// on `spawnRedisServer`.
import { spawn, spawnSync } from "node:child_process";
import { freePort } from "@tenant-integration/prism-testing";

export { freePort };

/** The redis-server to run: REDIS_SERVER_PATH, else `redis-server` on PATH, and its version; `undefined` when there is none. */
export function findRedisServer() {
  const command = process.env.REDIS_SERVER_PATH || "redis-server";
  const probe = spawnSync(command, ["--version"], { encoding: "utf8" });
  return probe.status === 0
    ? { command, version: probe.stdout.trim().match(/v=(\S+)/)?.[1] ?? probe.stdout.trim() }
    : undefined;
}

/**
 * Spawns `command args` (a redis-server) and resolves with the child, a promise of its exit and what
 * it printed so far once it logs "Ready to accept connections"; rejects, with its log, when it cannot
 * be run, exits first, or is not ready within `timeoutMs` (it is then killed). `what` names it in
 * those errors.
 */
export async function spawnRedisServer(command, args, what = "redis-server", timeoutMs = 15_000) {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  let log = "";
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(`${what} did not start within ${timeoutMs} ms`), timeoutMs);
    const fail = (why) => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(new Error(`${why}:\n${log}`));
    };
    const read = (chunk) => {
      log += chunk;
      if (log.includes("Ready to accept connections")) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on("data", read);
    child.stderr.on("data", read);
    child.once("error", (e) => fail(`${what} could not be run: ${e.message}`));
    child.once("exit", (code) => fail(`${what} exited (${code})`));
  });
  return { child, exited, output: () => log };
}

/**
 * Whether `error` (from {@link spawnRedisServer}) says the server exited because its port was taken:
 * a port free when asked may be taken by another process before redis-server binds it.
 */
export const isPortTaken = (error) => /exited \(1\)[\s\S]*Address already in use/.test(String(error?.message));

/**
 * Starts redis-server (on `port`, else a free one) and resolves once it accepts connections. A free
 * port taken before the server bound it is replaced by another, a few times.
 */
export async function startRedisServer({
  command = "redis-server",
  port: wanted,
  timeoutMs = 15_000,
  args = ["--appendonly", "no"],
} = {}) {
  for (let attempt = 1; ; attempt++) {
    const port = wanted ?? (await freePort());
    try {
      return await startOn(command, port, timeoutMs, args);
    } catch (error) {
      if (wanted !== undefined || attempt >= 5 || !isPortTaken(error)) throw error;
    }
  }
}

/** {@link startRedisServer} on `port`. */
async function startOn(command, port, timeoutMs, args) {
  const { child, exited, output } = await spawnRedisServer(
    command,
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", ...args],
    "redis-server",
    timeoutMs,
  );
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    pid: child.pid,
    output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) process.kill(child.pid, "SIGTERM");
      await exited;
    },
    /** Kills it with SIGKILL (no shutdown, no last write) and waits until it is gone. */
    async kill() {
      if (child.exitCode === null && child.signalCode === null) process.kill(child.pid, "SIGKILL");
      await exited;
    },
  };
}
