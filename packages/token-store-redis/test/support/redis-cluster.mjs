// A throwaway Redis Cluster for tests (issue 31): `primaries` redis-servers (and `replicas` per
// primary) with --cluster-enabled yes on free loopback ports (client and bus port both chosen at run
// time), joined by `redis-cli --cluster create`, without persistence; stopped by their pids.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "@tenant-integration/prism-testing";
import { startRedisServer } from "@tenant-integration/test-support/redis-server";

/** `redis-cli` (next to REDIS_SERVER_PATH's directory when set, else on PATH). */
function redisCli() {
  const server = process.env.REDIS_SERVER_PATH;
  return server && server.includes("/") ? join(server, "..", "redis-cli") : "redis-cli";
}

/** Runs redis-cli with `args` against 127.0.0.1:`port` and returns its output; throws on failure. */
export function cli(port, ...args) {
  const run = spawnSync(redisCli(), ["-h", "127.0.0.1", "-p", String(port), ...args], {
    encoding: "utf8",
    timeout: 30_000,
  });
  if (run.status !== 0)
    throw new Error(`redis-cli ${args.join(" ")} failed (${run.status}): ${run.stderr}${run.stdout}`);
  return run.stdout.trim();
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Whether a write on the primary at `port` reaches its replicas: a probe `SET` of a key in its slots,
 * then `WAIT 1 200` on the same connection (redis-cli reading both from stdin), which counts the
 * replicas that processed it. A replica that is merely connected is not enough: after its full sync
 * the primary sends it writes only from its first acknowledgement once online (up to a second), and
 * a test asking for `WAIT` (the `replicas` option) before then would wait in vain.
 */
function writesReachReplica(port) {
  for (let i = 0; i < 1000; i++) {
    const key = `cluster-ready:{${i}}`;
    const run = spawnSync(redisCli(), ["-h", "127.0.0.1", "-p", String(port)], {
      input: `SET ${key} 1\nWAIT 1 200\n`,
      encoding: "utf8",
      timeout: 30_000,
    });
    const [set, acknowledged] = run.stdout.trim().split("\n");
    if (set?.startsWith("MOVED")) continue; // the key is in another primary's slots
    return set === "OK" && Number(acknowledged) >= 1;
  }
  return false;
}

/** Waits (at most 30 s) until a write on every primary reaches its replica (see `writesReachReplica`). */
async function untilReplicasStream(nodes) {
  const deadline = Date.now() + 30_000;
  const primaries = () => nodes.filter((n) => cli(n.port, "ROLE").startsWith("master"));
  while (!primaries().every((n) => writesReachReplica(n.port))) {
    if (Date.now() > deadline)
      throw new Error(`the replicas did not receive writes within 30 s:\n${cli(nodes[0].port, "CLUSTER", "NODES")}`);
    await sleep(100);
  }
}

/**
 * Starts a cluster and resolves once every node reports `cluster_state:ok` and knows every other node,
 * and, with replicas, once a write on every primary reaches its replica.
 */
export async function startRedisCluster({
  command = process.env.REDIS_SERVER_PATH || "redis-server",
  primaries = 3,
  replicas = 0,
  nodeTimeoutMs = 2_000,
} = {}) {
  const dir = mkdtempSync(join(tmpdir(), "redis-cluster-"));
  const nodes = [];
  /** Each node's arguments, by port: a node restarted with them rejoins with its cluster config file. */
  const argsOf = new Map();
  const stopAll = async () => {
    // A node a test stopped (SIGSTOP) would never act on the SIGTERM: resumed first.
    for (const node of nodes) {
      try {
        process.kill(node.pid, "SIGCONT");
      } catch {
        // Already gone.
      }
    }
    await Promise.all(nodes.map((node) => node.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < primaries * (1 + replicas); i++) {
      const port = await freePort();
      const busPort = await freePort();
      const args = [
        "--appendonly",
        "no",
        "--cluster-enabled",
        "yes",
        "--cluster-port",
        String(busPort),
        "--cluster-config-file",
        join(dir, `nodes-${port}.conf`),
        "--cluster-node-timeout",
        String(nodeTimeoutMs),
        "--dir",
        dir,
      ];
      argsOf.set(port, args);
      nodes.push(await startRedisServer({ command, port, args }));
    }
    cli(
      nodes[0].port,
      "--cluster",
      "create",
      ...nodes.map((n) => `127.0.0.1:${n.port}`),
      "--cluster-replicas",
      String(replicas),
      "--cluster-yes",
    );
    const deadline = Date.now() + 30_000;
    for (;;) {
      const ok = nodes.every((n) => {
        const info = cli(n.port, "CLUSTER", "INFO");
        return info.includes("cluster_state:ok") && info.includes(`cluster_known_nodes:${nodes.length}`);
      });
      if (ok) break;
      if (Date.now() > deadline)
        throw new Error(`the cluster did not become ready within 30 s:\n${cli(nodes[0].port, "CLUSTER", "NODES")}`);
      await sleep(100);
    }
    if (replicas > 0) await untilReplicasStream(nodes);
  } catch (e) {
    await stopAll();
    throw e;
  }
  return {
    nodes,
    /** `redis://127.0.0.1:<port>` of each node, the primaries first as created. */
    urls: nodes.map((n) => n.url),
    version: spawnSync(command, ["--version"], { encoding: "utf8" }).stdout.trim(),
    /** Starts the node `index` again (after a kill) on its port, with its cluster config file: it rejoins the cluster. */
    async restart(index) {
      const port = nodes[index].port;
      nodes[index] = await startRedisServer({ command, port, args: argsOf.get(port) });
      return nodes[index];
    },
    stop: stopAll,
  };
}
