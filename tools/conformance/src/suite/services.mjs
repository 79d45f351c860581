// The services a run needs: the sandbox tenant as a process (its test clock, ledger, request log,
// events and faults over HTTP), redis-server on a free loopback port (redis-server.mjs), a Redis
// Cluster of such servers (redis-cluster.mjs), PostgreSQL (postgres.mjs), and a token file directory
// of the run's own for disk faults. Every process started here is stopped by the caller's close().
import { execFileSync, spawn } from "node:child_process";
import { mkdir, readdir, rename, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { REPO } from "./scenarios.mjs";

export { OWN_CLUSTER_NODE_TIMEOUT_MS, startRedisCluster } from "./redis-cluster.mjs";
export { findPostgres, startPostgresService } from "./postgres.mjs";
export { findRedisServer, freePort, startRedis } from "./redis-server.mjs";

const SANDBOX_CLI = join(REPO, "packages", "sandbox", "dist", "cli.js");
/** Past the access token's 15 minutes. */
export const EXPIRE_SECONDS = 15 * 60 + 1;

/**
 * Starts the built sandbox with its test routes, auto-approve and strict rotation, and the given
 * clients registered.
 *
 * @param {{ id: string, redirectUris: string[] }[]} clients
 * @param {{ users?: number }} [options] how many users can sign in (the sandbox's default: 3)
 */
export async function startSandbox(clients, { users } = {}) {
  const args = [SANDBOX_CLI, "--port", "0", "--json", "--auto-approve", "--test-clock"];
  if (users !== undefined) args.push("--users", String(users));
  for (const client of clients) args.push("--client", `id=${client.id},redirect=${client.redirectUris.join("|")}`);
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const first = await new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once("line", (line) => resolve(JSON.parse(line)));
    child.once("exit", (code) => reject(new Error(`the sandbox exited (${code}) before it started: ${stderr}`)));
  });
  const url = first.url;
  let offsetMs = 0;
  const call = async (method, path, body) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: body ? { "content-type": "application/json" } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    if (!response.ok) throw new Error(`sandbox ${method} ${path}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  return {
    url,
    pid: child.pid,
    /** How far its clock has moved, in ms; actors' clocks follow it. */
    get offsetMs() {
      return offsetMs;
    },
    async advance(seconds) {
      await call("POST", "/__sandbox/clock", { advanceSeconds: seconds });
      offsetMs += seconds * 1000;
    },
    /** The refresh-token ledger: every presentation, reuse and family (GET /__sandbox/ledger). */
    ledger: () => call("GET", "/__sandbox/ledger"),
    /** The ids of the users who can sign in, in order (GET /__sandbox/users). */
    users: async () => (await call("GET", "/__sandbox/users")).users.map((user) => String(user.id)),
    events: async () => (await call("GET", "/__sandbox/events")).events,
    /** The headers of every request to the token, revocation and API endpoints (GET /__sandbox/requests). */
    requests: async () => (await call("GET", "/__sandbox/requests")).requests,
    addFault: (spec) => call("POST", "/__sandbox/faults", spec),
    /** Forgets the ledger, the events, the requests and the faults, between runs. */
    async reset() {
      await call("DELETE", "/__sandbox/ledger");
      await call("DELETE", "/__sandbox/events");
      await call("DELETE", "/__sandbox/requests");
      await call("DELETE", "/__sandbox/faults");
    },
    output: () => stderr,
    async close() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** Runs `mount` with `args`; its failure says that disk faults need root. */
function mount(...args) {
  try {
    execFileSync("mount", args, { stdio: "pipe" });
  } catch (error) {
    throw new Error(
      `disk faults mount a tmpfs and need root (as CI runs): mount ${args.join(" ")} failed: ${error.message}`,
    );
  }
}

/** Writes until the disk at `dir` refuses (ENOSPC), in big pieces and then in pages, so no page is left. */
async function fill(dir) {
  let i = 0;
  for (const size of [64 * 1024, 4 * 1024, 512]) {
    for (;;) {
      try {
        await writeFile(join(dir, `.filler-${i++}`), Buffer.alloc(size));
      } catch (error) {
        if (error.code !== "ENOSPC") throw error;
        break;
      }
    }
  }
}

/**
 * A tmpfs of its own behind `dir` (needs root, as CI runs: root ignores file modes, so a chmod could
 * not fake a read-only directory): remounted read-only, filled to the last page, or writable again;
 * or made unreachable, as a network disk that stops answering, and reachable again.
 *
 * `dir` is a symbolic link to the tmpfs's mount point beside it. `unreachable` swaps it, atomically
 * (a rename), for a link to a regular file, so that every read, write, rename and mkdir under `dir`
 * fails at once (ENOTDIR) and no process ever finds it empty; `reachable` swaps the link back to the
 * same tmpfs, files and all. Every kit treats any error but "no such file" as a failed read or write,
 * as it does the EIO, ETIMEDOUT or ENOTCONN of a network disk. (A hard-mounted NFS that stops
 * answering hangs its callers in uninterruptible sleep instead, which a test could not undo: not
 * simulated.)
 */
export async function startDisk(dir, sizeKiB = 256) {
  const disk = `${dir}.disk`;
  const dead = `${dir}.unreachable`;
  await mkdir(disk, { recursive: true, mode: 0o700 });
  mount("-t", "tmpfs", "-o", `size=${sizeKiB}k,mode=0700`, "tmpfs", disk);
  await writeFile(dead, "");
  /** Points `dir` at `target`, in one rename. */
  const link = async (target) => {
    await rm(`${dir}.next`, { force: true });
    await symlink(target, `${dir}.next`);
    await rename(`${dir}.next`, dir);
  };
  await link(disk);
  return {
    "read-only": () => mount("-o", "remount,ro", disk),
    full: () => fill(disk),
    async writable() {
      mount("-o", "remount,rw", disk);
      for (const name of await readdir(disk)) if (name.startsWith(".filler-")) await rm(join(disk, name));
    },
    unreachable: () => link(dead),
    reachable: () => link(disk),
    close: () => execFileSync("umount", ["-l", disk], { stdio: "pipe" }),
  };
}
