// A Redis Cluster of the suite's own (issue 31; replicas and failovers, issue 36): redis-servers with
// `--cluster-enabled yes` on free loopback ports, joined by `redis-cli --cluster create`, and the
// redis steps of a run on the primary that owns the session's hash slot. Each behaviour is a named
// function of the cluster's state (`cluster`: its nodes, its redis-cli, the outage under way).
// Every process started here is stopped by the cluster's close().
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  freePort,
  isPortTaken,
  RECORDS_ACL,
  redisCliOf,
  setDefaultUserKeys,
  spawnRedisServer,
} from "./redis-server.mjs";

/** The cluster-node-timeout of a cluster a run stops Redis in: short, so the cluster marks the stopped primary failed within the outage. */
export const OWN_CLUSTER_NODE_TIMEOUT_MS = 3000;
/** The longest a cluster may take to be ready (cluster_state:ok everywhere, replicas streaming). */
const READY_MS = 30_000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs redis-cli against the node on `port` (asynchronously, so that the actors' lines are read
 * while a node is asked); `input`, when given, is its standard input (several commands on one
 * connection). Resolves with its output; rejects naming the command.
 */
function ask(cluster, port, args, input) {
  return new Promise((resolve, reject) => {
    const child = execFile(
      cluster.cli,
      ["-h", "127.0.0.1", "-p", String(port), ...args],
      { encoding: "utf8", timeout: 10_000 },
      (error, stdout, stderr) =>
        error
          ? reject(new Error(`redis-cli -p ${port} ${args.join(" ")} failed: ${error.message}${stderr}${stdout}`))
          : resolve(stdout),
    );
    if (input !== undefined) child.stdin.end(input);
  });
}

/** Starts `node` on its port, directory and nodes.conf (a node started again rejoins as itself). */
async function startNode(cluster, node) {
  const args = ["--port", String(node.port), "--bind", "127.0.0.1", "--save", "", "--dir", node.dir];
  if (cluster.appendonly) args.push("--appendonly", "yes", "--appendfsync", "always");
  else args.push("--appendonly", "no");
  args.push("--cluster-enabled", "yes", "--cluster-port", String(node.busPort), "--cluster-config-file", "nodes.conf");
  if (cluster.nodeTimeoutMs) args.push("--cluster-node-timeout", String(cluster.nodeTimeoutMs));
  Object.assign(node, await spawnRedisServer(cluster.command, args, "redis-server (cluster node)"));
}

async function killNode(node) {
  if (node.child.exitCode === null && node.child.signalCode === null) node.child.kill("SIGKILL");
  await node.exited;
}

/** The nodes that run: all but the one an outage killed. */
const liveNodes = (cluster) =>
  cluster.nodes.filter((node) => !(cluster.outage && cluster.outage.kind !== "hang" && cluster.outage.node === node));

/**
 * `CLUSTER NODES` as asked of a live node, one object per node:
 * `<id> <ip:port@cport> <flags> <primary> <ping> <pong> <epoch> <link> <slot or range>...`.
 */
async function table(cluster) {
  const text = await ask(cluster, liveNodes(cluster)[0].port, ["CLUSTER", "NODES"]);
  return text
    .split("\n")
    .filter((row) => row.trim())
    .map((row) => {
      const fields = row.trim().split(" ");
      return {
        id: fields[0],
        port: Number(fields[1]?.match(/:(\d+)@/)?.[1]),
        flags: fields[2] ?? "",
        primaryId: fields[3],
        slots: fields.slice(8),
      };
    });
}

/**
 * Whether a write on the primary at `port` reaches a replica: a probe `SET` of a key in its slots,
 * then `WAIT 1 200` on the same connection, which counts the replicas that processed it (a replica
 * just after its full sync gets writes only from its first acknowledgement once online).
 */
async function writesReachReplica(cluster, port) {
  for (let i = 0; i < 1000; i++) {
    const output = await ask(cluster, port, [], `SET conformance-ready:{${i}} 1\nWAIT 1 200\n`);
    const [set, acknowledged] = output.trim().split("\n");
    if (set?.startsWith("MOVED")) continue; // the key is in another primary's slots
    return set === "OK" && Number(acknowledged) >= 1;
  }
  return false;
}

/**
 * Whether every live node reports cluster_state:ok and knows every node; with replicas, whether every
 * primary that owns slots has its replicas (all but the one an outage killed) and streams writes to
 * them.
 */
async function isReady(cluster) {
  const live = liveNodes(cluster);
  const infos = await Promise.all(
    live.map((node) => ask(cluster, node.port, ["CLUSTER", "INFO"]).catch((error) => error.message)),
  );
  const known = `cluster_known_nodes:${cluster.nodes.length}`;
  if (!infos.every((info) => /cluster_state:ok/.test(info) && info.includes(known))) return false;
  if (cluster.replicas === 0) return true;
  const rows = await table(cluster);
  const ports = new Set(live.map((node) => node.port));
  const replicasOf = (primary) =>
    rows.filter((row) => row.primaryId === primary.id && ports.has(row.port) && !row.flags.includes("fail"));
  const primaries = rows.filter((row) => row.flags.includes("master") && row.slots.length > 0 && ports.has(row.port));
  // A node an outage killed is missing from one primary's replicas (after a failover, from the promoted one's).
  const missing = cluster.outage && cluster.outage.kind !== "hang" ? 1 : 0;
  const short = primaries.reduce((sum, primary) => sum + Math.max(0, cluster.replicas - replicasOf(primary).length), 0);
  if (short > missing) return false;
  for (const primary of primaries)
    if (replicasOf(primary).length > 0 && !(await writesReachReplica(cluster, primary.port))) return false;
  return true;
}

/** Resolves once the cluster is ready (see isReady); fails after READY_MS with its CLUSTER NODES. */
async function ready(cluster) {
  const deadline = Date.now() + READY_MS;
  while (!(await isReady(cluster).catch(() => false))) {
    if (Date.now() > deadline) {
      const nodes = await ask(cluster, liveNodes(cluster)[0].port, ["CLUSTER", "NODES"]).catch((e) => e.message);
      throw new Error(`the Redis Cluster was not ready within ${READY_MS / 1000} s:\n${nodes}`);
    }
    await sleep(100);
  }
}

/** The primary that owns the hash slot of `key` (CLUSTER KEYSLOT, CLUSTER NODES), which must hold `key`. */
async function ownerOf(cluster, key) {
  if (!key) throw new Error("a redis step on a cluster needs the session's key to find its primary");
  const asked = liveNodes(cluster).find((node) => node !== cluster.outage?.node) ?? cluster.nodes[0];
  const slot = Number((await ask(cluster, asked.port, ["CLUSTER", "KEYSLOT", key])).trim());
  const row = (await table(cluster)).find(
    (candidate) =>
      candidate.flags.includes("master") &&
      candidate.slots.some((range) => {
        const [first, last = first] = range.split("-").map(Number);
        return slot >= first && slot <= last;
      }),
  );
  const node = cluster.nodes.find((candidate) => candidate.port === row?.port);
  if (!node) throw new Error(`no primary of the cluster owns slot ${slot} of ${key}`);
  // Guards the step against a drifted key scheme: acting on another primary would test nothing.
  if ((await ask(cluster, node.port, ["EXISTS", key])).trim() !== "1")
    throw new Error(`${key} is not on 127.0.0.1:${node.port}, the primary that owns its slot ${slot}`);
  return node;
}

/** A field of `INFO replication` on the node at `port`, as a number. */
async function replicationField(cluster, port, field) {
  const info = await ask(cluster, port, ["INFO", "replication"]);
  return Number(info.match(new RegExp(`${field}:(\\d+)`))?.[1] ?? Number.NaN);
}

/**
 * `failover`: the primary of `key` killed (SIGKILL) and its replica promoted at once with
 * `CLUSTER FAILOVER TAKEOVER`, once that replica has every write the primary took (its replication
 * offset caught up: a write the primary acknowledged and never sent is lost in any failover, which
 * no kit can undo). Resolves once the replica is a primary and every live node reports
 * cluster_state:ok again.
 */
async function failover(cluster, key) {
  const primary = await ownerOf(cluster, key);
  const rows = await table(cluster);
  const primaryId = rows.find((row) => row.port === primary.port)?.id;
  const replica = cluster.nodes.find((node) =>
    rows.some((row) => row.port === node.port && row.primaryId === primaryId && row.flags.includes("slave")),
  );
  if (!replica) throw new Error(`the primary 127.0.0.1:${primary.port} has no replica to fail over to`);
  const deadline = Date.now() + 5_000;
  const wanted = await replicationField(cluster, primary.port, "master_repl_offset");
  while ((await replicationField(cluster, replica.port, "slave_repl_offset")) < wanted && Date.now() < deadline)
    await sleep(10);
  cluster.outage = { kind: "failover", node: primary };
  await killNode(primary);
  await ask(cluster, replica.port, ["CLUSTER", "FAILOVER", "TAKEOVER"]);
  const promoted = Date.now() + READY_MS;
  while (!(await ask(cluster, replica.port, ["ROLE"])).startsWith("master")) {
    if (Date.now() > promoted) throw new Error(`127.0.0.1:${replica.port} was not promoted within 30 s`);
    await sleep(50);
  }
  await ready(cluster);
}

/** The outage `kind`'s node, which the step `what` needs; undefined when another outage (or none) is under way. */
function takeOutage(cluster, kinds) {
  if (!kinds.includes(cluster.outage?.kind)) return undefined;
  const { node } = cluster.outage;
  cluster.outage = undefined;
  return node;
}

/** Stops every node (a stopped one is resumed first) and removes their directories. */
async function closeCluster(cluster) {
  for (const node of cluster.nodes) node.child?.kill("SIGCONT");
  await Promise.all(cluster.nodes.filter((node) => node.child).map(killNode));
  await rm(cluster.dir, { recursive: true, force: true });
}

/**
 * Starts a node on free ports. A port is free when asked but another process may take it before
 * redis-server binds it (the server then exits: "Address already in use"), so such a node is
 * started again on new ports, a few times.
 */
async function startNewNode(cluster) {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const busPort = await freePort();
    if (busPort === port) continue;
    const node = { port, busPort, dir: join(cluster.dir, String(port)) };
    await mkdir(node.dir, { recursive: true });
    try {
      await startNode(cluster, node);
      return node;
    } catch (error) {
      if (attempt >= 5 || !isPortTaken(error)) throw error;
      await rm(node.dir, { recursive: true, force: true });
    }
  }
}

/** Starts the nodes, joins them (`--cluster create`), and waits until the cluster is ready. */
async function createCluster(cluster, primaries) {
  for (let i = 0; i < primaries * (1 + cluster.replicas); i++) cluster.nodes.push(await startNewNode(cluster));
  const addresses = cluster.nodes.map((node) => `127.0.0.1:${node.port}`);
  await ask(cluster, cluster.nodes[0].port, [
    "--cluster",
    "create",
    ...addresses,
    "--cluster-replicas",
    String(cluster.replicas),
    "--cluster-yes",
  ]);
  await ready(cluster);
}

/**
 * Starts a Redis Cluster: `primaries` redis-servers, and `replicas` replicas of each, each on a free
 * loopback port with a free bus port (`--cluster-port`) and a directory of its own (its nodes.conf
 * and, with `appendonly`, its append-only file fsynced on every write), joined by
 * `redis-cli --cluster create` (redis-cli beside the redis-server `command`, else on PATH); resolves
 * once every node reports `cluster_state:ok` and knows the others, and a write on every primary
 * reaches its replica. `urls` are the nodes' URLs, the seeds an actor's cluster client starts from.
 *
 * The redis steps of a run act on the primary that owns the session's hash slot (`key` is one of the
 * session's keys): `restart` (SIGKILL, started again on the same port, directory and nodes.conf, so
 * it rejoins as the same primary with its data), `hang` (SIGSTOP, its connections stay open),
 * `resume`, `down` (SIGKILL: without replicas its slots are unreachable, the cluster reports
 * CLUSTERDOWN once it marks it failed), `failover` (SIGKILL, and its replica promoted), `up` (the
 * node a `down` or `failover` killed started again: after a failover it rejoins as a replica of the
 * new primary), `stay-down` (it stays down: nothing to do), `back`; each that brings a node back
 * resolves once the cluster is ready again.
 *
 * @param {{ command?: string, primaries?: number, replicas?: number, appendonly?: boolean, nodeTimeoutMs?: number }} [options]
 */
export async function startRedisCluster({
  command = "redis-server",
  primaries = 3,
  replicas = 0,
  appendonly = false,
  nodeTimeoutMs,
} = {}) {
  const cluster = {
    command,
    cli: redisCliOf(command),
    dir: await mkdtemp(join(tmpdir(), "conformance-cluster-")),
    replicas,
    appendonly,
    nodeTimeoutMs,
    nodes: [],
    /** The outage under way: `{ kind: "hang" | "down" | "failover", node }`. */
    outage: undefined,
  };
  try {
    await createCluster(cluster, primaries);
  } catch (error) {
    await closeCluster(cluster);
    throw error;
  }
  const up = async () => {
    const node = takeOutage(cluster, ["down", "failover"]);
    if (!node) return;
    await startNode(cluster, node);
    await ready(cluster);
  };
  const resume = async () => {
    const node = takeOutage(cluster, ["hang"]);
    if (!node) return;
    node.child.kill("SIGCONT");
    await ready(cluster);
  };
  return {
    urls: cluster.nodes.map((node) => `redis://127.0.0.1:${node.port}`),
    async restart(key) {
      const node = await ownerOf(cluster, key);
      await killNode(node);
      await startNode(cluster, node);
      await ready(cluster);
    },
    async hang(key) {
      const node = await ownerOf(cluster, key);
      cluster.outage = { kind: "hang", node };
      node.child.kill("SIGSTOP");
    },
    resume,
    async down(key) {
      const node = await ownerOf(cluster, key);
      cluster.outage = { kind: "down", node };
      await killNode(node);
    },
    failover: (key) => failover(cluster, key),
    up,
    "stay-down": () => {
      if (cluster.outage?.kind !== "failover") throw new Error("stay-down follows a failover");
    },
    /** Ends the outage `hang`, `down` or `failover` made. */
    back: () => (cluster.outage?.kind === "hang" ? resume() : up()),
    /** `records` steps, on every live node: the session's records read-only for the actors' user, or writable again. */
    records: (what) =>
      Promise.all(liveNodes(cluster).map((node) => setDefaultUserKeys(cluster.cli, node.port, RECORDS_ACL[what]))),
    close: () => closeCluster(cluster),
  };
}
