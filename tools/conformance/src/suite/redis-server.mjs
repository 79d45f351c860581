// redis-server on a free loopback port, for the runs on `redis` storage and the nodes of a cluster,
// with the redis steps (restart, hang, down, back) of a run that has a server of its own.
import { execFile, spawn, spawnSync } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";

/** A free TCP port on the loopback interface. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The redis-server to run (REDIS_SERVER_PATH, else the one on PATH) and its version, or undefined. */
export function findRedisServer() {
  const command = process.env.REDIS_SERVER_PATH || "redis-server";
  const probe = spawnSync(command, ["--version"], { encoding: "utf8" });
  return probe.status === 0
    ? { command, version: probe.stdout.trim().match(/v=(\S+)/)?.[1] ?? probe.stdout.trim() }
    : undefined;
}

/** The redis-cli beside the redis-server `command` (or the one on PATH). */
export const redisCliOf = (command) => (command.includes("/") ? join(command, "..", "redis-cli") : "redis-cli");

/**
 * The key patterns of the default user (the one the actors connect as) for a `records` step
 * (spec/conformance/README.md): `refuse` leaves every key readable and only the refresh lock's
 * (`…:lock`) writable, so a write of the intent or the tokens answers NOPERM while the lock and
 * every read work; `accept` gives every key back.
 */
export const RECORDS_ACL = {
  refuse: ["resetkeys", "%R~*", "~*:lock"],
  accept: ["resetkeys", "~*"],
};

/** Sets the default user's key patterns on the redis-server at `port` with `cli` (ACL SETUSER). */
export function setDefaultUserKeys(cli, port, rules) {
  return new Promise((resolve, reject) => {
    execFile(
      cli,
      ["-h", "127.0.0.1", "-p", String(port), "ACL", "SETUSER", "default", ...rules],
      { encoding: "utf8", timeout: 10_000 },
      (error, stdout, stderr) =>
        error || stdout.trim() !== "OK"
          ? reject(
              new Error(
                `redis-cli -p ${port} ACL SETUSER default ${rules.join(" ")}: ${error?.message ?? ""}${stderr}${stdout}`,
              ),
            )
          : resolve(),
    );
  });
}

/**
 * Spawns `command args` (a redis-server) and resolves with the child and a promise of its exit once
 * it logs "Ready to accept connections"; rejects, with its log, when it exits first or is not ready
 * within 15 s (it is then killed). `what` names it in those errors.
 */
export async function spawnRedisServer(command, args, what) {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  let log = "";
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${what} did not start within 15 s:\n${log}`));
    }, 15_000);
    const read = (chunk) => {
      log += chunk;
      if (log.includes("Ready to accept connections")) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on("data", read);
    child.stderr.on("data", read);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${code}):\n${log}`));
    });
  });
  return { child, exited };
}

/**
 * Starts redis-server on a free loopback port: no persistence, or an append-only file fsynced on
 * every write (`appendonly`) in `dir`, so that a restart keeps what was acknowledged. Its redis steps
 * act on the one server (the session's key they are given, as a cluster's are, is not needed).
 */
export async function startRedis({ command = "redis-server", appendonly = false, dir } = {}) {
  const port = await freePort();
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", ""];
  if (appendonly) args.push("--appendonly", "yes", "--appendfsync", "always", "--dir", dir);
  else args.push("--appendonly", "no");
  let child;
  let exited;
  /** The outage under way: "hang" or "down". */
  let outage;
  const start = async () => {
    ({ child, exited } = await spawnRedisServer(command, args, "redis-server"));
  };
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    /** Kills it (SIGKILL: no shutdown, no last write) and starts it again on the same port and files. */
    async restart() {
      await kill();
      await start();
    },
    /** Stops it (SIGSTOP): connections stay open and nothing answers, as a hung server. */
    hang: () => {
      outage = "hang";
      child.kill("SIGSTOP");
    },
    resume: () => {
      outage = undefined;
      child.kill("SIGCONT");
    },
    /** Kills it: connections are refused until `up`. */
    down: async () => {
      outage = "down";
      await kill();
    },
    up: async () => {
      outage = undefined;
      await start();
    },
    /** Ends the outage `hang` or `down` made. */
    back() {
      return outage === "hang" ? this.resume() : outage === "down" ? this.up() : undefined;
    },
    /** `records` steps: the session's records read-only for the actors' user, or writable again. */
    records: (what) => setDefaultUserKeys(redisCliOf(command), port, RECORDS_ACL[what]),
    async close() {
      child.kill("SIGCONT");
      await kill();
    },
  };
}
