// redis-server on a free loopback port (started by @tenant-integration/test-support, as the Redis
// store's tests start it), for the runs on `redis` storage and the nodes of a cluster, with the redis
// steps (restart, hang, down, back) of a run that has a server of its own.
import { execFile } from "node:child_process";
import { join } from "node:path";
import {
  findRedisServer,
  freePort,
  isPortTaken,
  spawnRedisServer,
} from "@tenant-integration/test-support/redis-server";

export { findRedisServer, freePort, isPortTaken, spawnRedisServer };

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
