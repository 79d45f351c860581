// Failover, measured (issue 31): how often a session survives its Redis Cluster primary being killed
// right after a refresh, with the replica promoted by CLUSTER FAILOVER, with and without the
// `replicas` (WAIT) option. Not part of `pnpm test` (it is a measurement, not a check): run it from
// this package after `pnpm run build`:
//
//   node scripts/failover-trials.mjs [trials per mode, default 50]
//
// Each trial: a process signs in (or continues) on a 3-primary cluster with a replica per primary;
// its access token expires and it refreshes (the tenant rotates the refresh token, the storage
// writes the new one: SET, and with `replicas` WAIT 1); right after the refresh resolved, the
// primary of the session's slot is killed (SIGKILL) and its replica is promoted (CLUSTER FAILOVER
// TAKEOVER: at once, without the dead primary's agreement). A second process, on its own cluster
// connections, then needs a token after the next expiry: the session is kept when it refreshes with
// the rotated token the replica holds, and lost when the replica lacked the last write (it presents
// the rotated-away token: the tenant, under strict rotation, revokes the family). The killed node is
// restarted as a replica of the new primary before the next trial.
import { spawnSync } from "node:child_process";
import { createCluster } from "redis";
import { createSandbox } from "@tenant-integration/sandbox";
import { createTokenManager } from "@tenant-integration/token-manager";
import { redisClusterStorage } from "../dist/index.js";
import { cli, startRedisCluster } from "../test/support/redis-cluster.mjs";

const TRIALS = Number(process.argv[2] ?? 50);
const CLIENT = "failover-demo";
const REDIRECT = "http://127.0.0.1:53682/callback";
const ORIGIN = "http://127.0.0.1:4020";
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const cluster = await startRedisCluster({ primaries: 3, replicas: 1, nodeTimeoutMs: 1_000 });
console.log(
  `${cluster.version}; node-redis ${JSON.parse(spawnSync("node", ["-p", "JSON.stringify(require('redis/package.json').version)"], { encoding: "utf8" }).stdout)}`,
);

/** The cluster's view from a live node: id, port, role, the primary a replica follows, and the slot ranges of a primary. */
function view() {
  const live = cluster.nodes.find((node) => cli(node.port, "PING") === "PONG");
  return cli(live.port, "CLUSTER", "NODES")
    .split("\n")
    .map((line) => {
      const [id, address, flags, primaryId, , , , , ...slots] = line.split(" ");
      return {
        id,
        port: Number(address.split(":")[1].split("@")[0]),
        primary: flags.includes("master"),
        failed: flags.includes("fail"),
        primaryId,
        slots,
      };
    });
}

const owns = (node, slot) =>
  node.slots.some((range) => {
    const [from, to = from] = range.split("-").map(Number);
    return slot >= from && slot <= to;
  });

/** Waits until every live node says the cluster is ok and each primary has a connected replica. */
async function settled() {
  for (let i = 0; i < 300; i++) {
    const live = cluster.nodes.filter((node) => cli(node.port, "PING") === "PONG");
    const ok =
      live.length === cluster.nodes.length &&
      live.every((node) => cli(node.port, "CLUSTER", "INFO").includes("cluster_state:ok"));
    const synced =
      ok &&
      view()
        .filter((n) => n.primary)
        .every(
          (p) =>
            /connected_slaves:1/.test(cli(p.port, "INFO", "replication")) &&
            !/state=(wait_bgsave|send_bulk)/.test(cli(p.port, "INFO", "replication")),
        );
    if (synced) return;
    await sleep(100);
  }
  throw new Error(`the cluster did not settle:\n${cli(cluster.nodes[0].port, "CLUSTER", "NODES")}`);
}

async function connect() {
  const live = view().filter((n) => !n.failed);
  const client = createCluster({
    rootNodes: live.map((n) => ({ url: `redis://127.0.0.1:${n.port}` })),
    defaults: { socket: { reconnectStrategy: false, connectTimeout: 1_000 } },
  });
  client.on("error", () => {});
  await client.connect();
  return client;
}

function manager(storage, sandbox, clock) {
  return createTokenManager({
    baseUrl: ORIGIN,
    clientId: CLIENT,
    redirectUri: REDIRECT,
    scopes: ["profile:read"],
    storage,
    fetch: async (input, init) => sandbox.fetch(new Request(input, init)),
    now: () => Date.now() + clock.offsetMs,
  });
}

async function trial(replicas) {
  const sandbox = createSandbox({ clients: [{ id: CLIENT, redirectUris: [REDIRECT] }], autoApprove: true });
  const clock = { offsetMs: 0 };
  const prefix = `trial-${crypto.randomUUID()}:`;
  const options = {
    prefix,
    commandTimeoutMs: 2_000,
    ...(replicas ? { replicas: { count: 1, timeoutMs: 1_000 } } : {}),
  };
  const first = await connect();
  const a = manager(redisClusterStorage(first, options), sandbox, clock);
  const { url } = await a.beginAuthorization();
  const approved = await sandbox.fetch(new Request(url, { redirect: "manual" }));
  await a.completeAuthorization(approved.headers.get("location") ?? "");
  const slot = Number(
    cli(cluster.nodes[0].port, "CLUSTER", "KEYSLOT", `${prefix}tenant-integration:{${ORIGIN}:${CLIENT}}:tokens`),
  );
  const primary = view().find((n) => n.primary && owns(n, slot));
  const replica = view().find((n) => !n.primary && n.primaryId === primary.id);
  const index = cluster.nodes.findIndex((node) => node.port === primary.port);

  clock.offsetMs = 16 * 60_000;
  let refreshFailed = false;
  try {
    await a.getAccessToken(); // the refresh: rotated token written (and with replicas, acknowledged by the replica)
  } catch {
    refreshFailed = true; // with replicas: a REPLICATION_TIMEOUT is reported as STORAGE_FAILED
  }
  await cluster.nodes[index].kill();
  first.destroy();
  cli(replica.port, "CLUSTER", "FAILOVER", "TAKEOVER");
  for (let i = 0; i < 100 && !cli(replica.port, "ROLE").startsWith("master"); i++) await sleep(50);

  clock.offsetMs = 32 * 60_000;
  const second = await connect();
  const b = manager(redisClusterStorage(second, options), sandbox, clock);
  let outcome;
  try {
    await b.getAccessToken();
    outcome = sandbox.ledger.list().reuses.length === 0 ? "kept" : "reuse";
  } catch (error) {
    // SESSION_ENDED: the replica lacked the rotated token, the rotated-away one was presented.
    outcome = error?.code ?? String(error);
  }
  second.destroy();
  await cluster.restart(index); // rejoins as a replica of the promoted node
  await settled();
  return { outcome, refreshFailed };
}

try {
  await settled();
  for (const replicas of [false, true]) {
    const outcomes = {};
    let refreshFailed = 0;
    for (let i = 0; i < TRIALS; i++) {
      const result = await trial(replicas);
      outcomes[result.outcome] = (outcomes[result.outcome] ?? 0) + 1;
      if (result.refreshFailed) refreshFailed++;
    }
    const others = Object.entries(outcomes)
      .filter(([what]) => what !== "kept")
      .map(([what, n]) => `${what}: ${n}`)
      .join(", ");
    console.log(
      `${replicas ? "replicas: { count: 1, timeoutMs: 1000 }" : "no replicas option"}: session kept in ${outcomes.kept ?? 0} of ${TRIALS} trials${others ? ` (otherwise ${others})` : ""}; ${refreshFailed} refreshes reported STORAGE_FAILED`,
    );
  }
} finally {
  await cluster.stop();
}
