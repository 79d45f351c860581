// The services a run needs: the sandbox tenant as a process (its test clock, ledger, events and
// faults over HTTP), redis-server on a free loopback port, and a Redis Cluster of such servers; the
// redis steps (restart, hang, down, back) on either.
// Every process started here is stopped by the caller's close().
import { execFile, spawn, spawnSync } from "node:child_process";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { REPO } from "./scenarios.mjs";

const SANDBOX_CLI = join(REPO, "packages", "sandbox", "dist", "cli.js");
/** Past the access token's 15 minutes. */
export const EXPIRE_SECONDS = 15 * 60 + 1;

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

/**
 * Starts the built sandbox with its test routes, auto-approve and strict rotation, and the given
 * clients registered.
 *
 * @param {{ id: string, redirectUris: string[] }[]} clients
 */
export async function startSandbox(clients) {
  const args = [SANDBOX_CLI, "--port", "0", "--json", "--auto-approve", "--test-clock"];
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

/** The redis-server to run (REDIS_SERVER_PATH, else the one on PATH) and its version, or undefined. */
export function findRedisServer() {
  const command = process.env.REDIS_SERVER_PATH || "redis-server";
  const probe = spawnSync(command, ["--version"], { encoding: "utf8" });
  return probe.status === 0
    ? { command, version: probe.stdout.trim().match(/v=(\S+)/)?.[1] ?? probe.stdout.trim() }
    : undefined;
}

/**
 * Spawns `command args` (a redis-server) and resolves with the child and a promise of its exit once
 * it logs "Ready to accept connections"; rejects, with its log, when it exits first or is not ready
 * within 15 s (it is then killed). `what` names it in those errors.
 */
async function spawnRedisServer(command, args, what) {
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
    async close() {
      child.kill("SIGCONT");
      await kill();
    },
  };
}

/** The cluster-node-timeout of a cluster a run stops Redis in: short, so the cluster marks the stopped primary failed within the outage. */
export const OWN_CLUSTER_NODE_TIMEOUT_MS = 3000;

/**
 * Starts a Redis Cluster (issue 31): `primaries` redis-servers with `--cluster-enabled yes` and no
 * replica, each on a free loopback port with a free bus port (`--cluster-port`) and a directory of
 * its own (its nodes.conf and, with `appendonly`, its append-only file fsynced on every write),
 * joined by `redis-cli --cluster create` (redis-cli beside REDIS_SERVER_PATH, else on PATH);
 * resolves once every node reports `cluster_state:ok` and knows the others. `urls` are the nodes'
 * URLs, the seeds an actor's cluster client starts from.
 *
 * The redis steps of a run act on the primary that owns the session's hash slot (`key` is one of the
 * session's keys): `restart` (SIGKILL, started again on the same port, directory and nodes.conf, so
 * it rejoins as the same primary with its data), `hang` (SIGSTOP, its connections stay open),
 * `resume`, `down` (SIGKILL: its slots are unreachable, the cluster reports CLUSTERDOWN once it marks
 * it failed), `up`, `back`; each that brings it back resolves once every node reports
 * `cluster_state:ok` again.
 *
 * @param {{ command?: string, primaries?: number, appendonly?: boolean, nodeTimeoutMs?: number }} [options]
 */
export async function startRedisCluster({
  command = "redis-server",
  primaries = 3,
  appendonly = false,
  nodeTimeoutMs,
} = {}) {
  const dir = await mkdtemp(join(tmpdir(), "conformance-cluster-"));
  const cli = command.includes("/") ? join(command, "..", "redis-cli") : "redis-cli";
  // Asynchronous, so that the actors' lines are read while a node is asked.
  const ask = (port, ...args) =>
    new Promise((resolve, reject) =>
      execFile(
        cli,
        ["-h", "127.0.0.1", "-p", String(port), ...args],
        { encoding: "utf8", timeout: 10_000 },
        (error, stdout, stderr) =>
          error
            ? reject(new Error(`redis-cli -p ${port} ${args.join(" ")} failed: ${error.message}${stderr}${stdout}`))
            : resolve(stdout),
      ),
    );
  const nodes = [];
  /** The outage under way: "hang" or "down", and its node. */
  let outage;
  const startNode = async (node) => {
    const args = ["--port", String(node.port), "--bind", "127.0.0.1", "--save", "", "--dir", node.dir];
    if (appendonly) args.push("--appendonly", "yes", "--appendfsync", "always");
    else args.push("--appendonly", "no");
    args.push(
      "--cluster-enabled",
      "yes",
      "--cluster-port",
      String(node.busPort),
      "--cluster-config-file",
      "nodes.conf",
    );
    if (nodeTimeoutMs) args.push("--cluster-node-timeout", String(nodeTimeoutMs));
    Object.assign(node, await spawnRedisServer(command, args, "redis-server (cluster node)"));
  };
  const killNode = async (node) => {
    if (node.child.exitCode === null && node.child.signalCode === null) node.child.kill("SIGKILL");
    await node.exited;
  };
  /** Resolves once every node reports cluster_state:ok and knows every other node. */
  const ready = async () => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const infos = await Promise.all(nodes.map((n) => ask(n.port, "CLUSTER", "INFO").catch((error) => error.message)));
      if (infos.every((info) => /cluster_state:ok/.test(info) && info.includes(`cluster_known_nodes:${nodes.length}`)))
        return;
      if (Date.now() > deadline)
        throw new Error(
          `the Redis Cluster was not ready within 30 s:\n${await ask(nodes[0].port, "CLUSTER", "NODES").catch((e) => e.message)}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  /** The primary that owns the hash slot of `key` (CLUSTER KEYSLOT, CLUSTER NODES), which must hold `key`. */
  const ownerOf = async (key) => {
    if (!key) throw new Error("a redis step on a cluster needs the session's key to find its primary");
    const asked = nodes.find((n) => n !== outage?.node) ?? nodes[0];
    const slot = Number((await ask(asked.port, "CLUSTER", "KEYSLOT", key)).trim());
    const table = await ask(asked.port, "CLUSTER", "NODES");
    // <id> <ip:port@cport> <flags> <primary> <ping> <pong> <epoch> <link> <slot or range>...
    const line = table
      .split("\n")
      .map((row) => row.trim().split(" "))
      .find(
        (fields) =>
          fields[2]?.includes("master") &&
          fields.slice(8).some((range) => {
            const [first, last = first] = range.split("-").map(Number);
            return slot >= first && slot <= last;
          }),
      );
    const port = Number(line?.[1]?.match(/:(\d+)@/)?.[1]);
    const node = nodes.find((n) => n.port === port);
    if (!node) throw new Error(`no primary of the cluster owns slot ${slot} of ${key}:\n${table}`);
    // Guards the step against a drifted key scheme: acting on another primary would test nothing.
    if ((await ask(node.port, "EXISTS", key)).trim() !== "1")
      throw new Error(`${key} is not on 127.0.0.1:${port}, the primary that owns its slot ${slot}`);
    return node;
  };
  const close = async () => {
    for (const node of nodes) node.child?.kill("SIGCONT");
    await Promise.all(nodes.filter((node) => node.child).map(killNode));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < primaries; i++) {
      const port = await freePort();
      const node = { port, busPort: await freePort(), dir: join(dir, String(port)) };
      await mkdir(node.dir);
      nodes.push(node);
      await startNode(node);
    }
    await ask(
      nodes[0].port,
      "--cluster",
      "create",
      ...nodes.map((n) => `127.0.0.1:${n.port}`),
      "--cluster-replicas",
      "0",
      "--cluster-yes",
    );
    await ready();
  } catch (error) {
    await close();
    throw error;
  }
  return {
    urls: nodes.map((n) => `redis://127.0.0.1:${n.port}`),
    /** SIGKILL to the primary of `key`, started again on the same port, directory and nodes.conf. */
    async restart(key) {
      const node = await ownerOf(key);
      await killNode(node);
      await startNode(node);
      await ready();
    },
    /** SIGSTOP to the primary of `key`: its connections stay open and nothing answers. */
    async hang(key) {
      const node = await ownerOf(key);
      outage = { kind: "hang", node };
      node.child.kill("SIGSTOP");
    },
    async resume() {
      if (outage?.kind !== "hang") return;
      const { node } = outage;
      outage = undefined;
      node.child.kill("SIGCONT");
      await ready();
    },
    /** SIGKILL to the primary of `key`: connections to it are refused, its slots unreachable. */
    async down(key) {
      const node = await ownerOf(key);
      outage = { kind: "down", node };
      await killNode(node);
    },
    async up() {
      if (outage?.kind !== "down") return;
      const { node } = outage;
      outage = undefined;
      await startNode(node);
      await ready();
    },
    /** Ends the outage `hang` or `down` made. */
    back() {
      return outage?.kind === "hang" ? this.resume() : this.up();
    },
    close,
  };
}

/**
 * A tmpfs of its own at `dir` (needs root, as CI runs: root ignores file modes, so a chmod could not
 * fake a read-only directory): remounted read-only, filled to the last page, or writable again.
 */
export async function startDisk(dir, sizeKiB = 256) {
  const { execFileSync } = await import("node:child_process");
  const { readdir, writeFile } = await import("node:fs/promises");
  const mount = (...args) => {
    try {
      execFileSync("mount", args, { stdio: "pipe" });
    } catch (error) {
      throw new Error(
        `disk faults mount a tmpfs and need root (as CI runs): mount ${args.join(" ")} failed: ${error.message}`,
      );
    }
  };
  await mkdir(dir, { recursive: true, mode: 0o700 });
  mount("-t", "tmpfs", "-o", `size=${sizeKiB}k,mode=0700`, "tmpfs", dir);
  return {
    "read-only": () => mount("-o", "remount,ro", dir),
    async full() {
      // Write until the disk refuses (ENOSPC), in big pieces and then in pages, so no page is left.
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
    },
    async writable() {
      mount("-o", "remount,rw", dir);
      for (const name of await readdir(dir)) if (name.startsWith(".filler-")) await rm(join(dir, name));
    },
    close: () => execFileSync("umount", ["-l", dir], { stdio: "pipe" }),
  };
}
