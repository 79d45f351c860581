// A throwaway redis-server for tests and benchmarks: started on a free loopback port with no
// persistence (no RDB, no AOF) unless `args` ask for it, and stopped by its pid.
import { spawn, spawnSync } from "node:child_process";
import { freePort } from "@tenant-integration/prism-testing";

/** The redis-server to run: REDIS_SERVER_PATH, else `redis-server` on PATH; `undefined` when there is none. */
export function findRedisServer() {
  const command = process.env.REDIS_SERVER_PATH || "redis-server";
  const probe = spawnSync(command, ["--version"], { encoding: "utf8" });
  return probe.status === 0 ? { command, version: probe.stdout.trim() } : undefined;
}

/** Starts redis-server (on `port`, else a free one) and resolves once it accepts connections (it prints "Ready to accept connections"). */
export async function startRedisServer({
  command = "redis-server",
  port: wanted,
  timeoutMs = 15_000,
  args = ["--appendonly", "no"],
} = {}) {
  const port = wanted ?? (await freePort());
  const child = spawn(command, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  const exited = new Promise((resolve) => child.once("exit", resolve));
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(`redis-server did not start within ${timeoutMs} ms`), timeoutMs);
    const fail = (why) => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(new Error(`${why}\n${log}`));
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
    child.once("error", (e) => fail(`redis-server could not be run: ${e.message}`));
    child.once("exit", (code) => fail(`redis-server exited with ${code}`));
  });
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    pid: child.pid,
    output: () => log,
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
