// Failover, measured (issue 31): how often a session survives its Redis Cluster primary being killed
// right after a refresh, with the replica promoted by CLUSTER FAILOVER, with and without the
// `replicas` (WAIT) option. Not part of `pnpm test` (it is a measurement, not a check): run it from
// this package after `pnpm run build`:
//
//   node scripts/failover-trials.mjs [--settle connected] [trials per mode, default 50]
//
// Each trial: a token manager signs in on a 3-primary cluster with a replica per primary; its
// access token expires and it refreshes (the tenant rotates the refresh token, the storage writes
// the new one: SET, and with `replicas` WAIT 1); right after the refresh resolved, the primary of
// the session's slot is killed (SIGKILL) and its replica is promoted (CLUSTER FAILOVER TAKEOVER: at
// once, without the dead primary's agreement). A second token manager, on cluster connections of
// its own as another process would have, then needs a token after the next expiry: the session is
// kept when it refreshes with the rotated token the replica holds, and lost when the replica lacked
// the last write (it presents the rotated-away token: the tenant, under strict rotation, revokes
// the family). The killed node is restarted as a replica of the new primary, and the next trial
// waits until the cluster has settled: every primary's replica has received a probe write made on
// the primary, so it is sent the primary's writes as they are made (see `replicated`; `--settle
// connected` waits only for a connected replica not in a bulk transfer, the earlier protocol, to
// compare).
//
// Each trial prints the replication offsets at the kill: the primary's master_repl_offset and the
// replica's slave_repl_offset and link status, read together over open connections right before
// the kill, and the replica's offset right after it (what it was promoted with).
import { spawnSync } from "node:child_process";
import { parseArgs } from "node:util";
import { createClient, createCluster } from "redis";
import { createSandbox } from "@tenant-integration/sandbox";
import { createTokenManager } from "@tenant-integration/token-manager";
import { redisClusterStorage } from "../dist/index.js";
import { cli, startRedisCluster } from "../test/support/redis-cluster.mjs";

const { values, positionals } = parseArgs({
  options: { settle: { type: "string", default: "caught-up" } },
  allowPositionals: true,
});
const TRIALS = Number(positionals[0] ?? 50);
if (!Number.isInteger(TRIALS) || TRIALS < 1)
  throw new Error(`the number of trials per mode is a positive integer, not ${positionals[0]}`);
if (values.settle !== "caught-up" && values.settle !== "connected")
  throw new Error(`--settle is caught-up or connected, not ${values.settle}`);
const CAUGHT_UP = values.settle === "caught-up";
const CLIENT = "failover-demo";
const REDIRECT = "http://127.0.0.1:53682/callback";
const ORIGIN = "http://127.0.0.1:4020";
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const cluster = await startRedisCluster({ primaries: 3, replicas: 1, nodeTimeoutMs: 1_000 });
console.log(
  `${cluster.version}; node-redis ${JSON.parse(spawnSync("node", ["-p", "JSON.stringify(require('redis/package.json').version)"], { encoding: "utf8" }).stdout)}; ${
    CAUGHT_UP
      ? "settled: every replica has received a probe write made on its primary"
      : "settled (earlier protocol): every primary has a connected replica not in a bulk transfer"
  }`,
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

/** The `field` of INFO replication text (a number when it is one), or `undefined`. */
function field(info, name) {
  const line = info.split(/\r?\n/).find((l) => l.startsWith(`${name}:`));
  if (line === undefined) return undefined;
  const value = line.slice(name.length + 1).trim();
  return /^\d+$/.test(value) ? Number(value) : value;
}

/** A key in one of the primary `p`'s slots, by its slot ranges (found with CLUSTER KEYSLOT once per range). */
const probeKeys = new Map();
function probeKey(p) {
  const ranges = p.slots.join(" ");
  for (let i = 0; !probeKeys.has(ranges); i++) {
    const key = `failover-trials:settled:{${i}}`;
    if (owns(p, Number(cli(p.port, "CLUSTER", "KEYSLOT", key)))) probeKeys.set(ranges, key);
  }
  return probeKeys.get(ranges);
}

/**
 * Whether the primary `p` has a replica that has caught up and receives its writes: after a probe
 * write on the primary, the replica's link is up and its processed offset (`slave_repl_offset`) has
 * reached the primary's `master_repl_offset`. A replica that is connected, even one whose
 * acknowledged offset equals the primary's, may not be sent writes yet: after a full resync the
 * primary starts sending them only on an acknowledgement (REPLCONF ACK, sent once a second) that
 * comes after it has put the replica online, and the writes made until then wait in its buffer,
 * lost with the primary. With `--settle connected`: a connected replica not in a bulk transfer
 * (the earlier protocol).
 */
function replicated(p) {
  const info = cli(p.port, "INFO", "replication");
  if (!/connected_slaves:1/.test(info)) return false;
  if (!CAUGHT_UP) return !/state=(wait_bgsave|send_bulk)/.test(info);
  // The replica as the primary knows it (the view of another node may not list it yet).
  const replica = /^slave0:.*\bport=(\d+),state=(\w+)/m.exec(info);
  if (replica?.[2] !== "online") return false;
  cli(p.port, "SET", probeKey(p), String(Date.now()));
  const want = field(cli(p.port, "INFO", "replication"), "master_repl_offset");
  const theirs = cli(Number(replica[1]), "INFO", "replication");
  return field(theirs, "master_link_status") === "up" && field(theirs, "slave_repl_offset") >= want;
}

/** Waits until every live node says the cluster is ok and each primary's replica has caught up (see `replicated`). */
async function settled() {
  for (let i = 0; i < 600; i++) {
    const live = cluster.nodes.filter((node) => cli(node.port, "PING") === "PONG");
    const ok =
      live.length === cluster.nodes.length &&
      live.every((node) => cli(node.port, "CLUSTER", "INFO").includes("cluster_state:ok"));
    if (
      ok &&
      view()
        .filter((n) => n.primary)
        .every((p) => replicated(p))
    )
      return;
    await sleep(100);
  }
  throw new Error(`the cluster did not settle:\n${cli(cluster.nodes[0].port, "CLUSTER", "NODES")}`);
}

/** A plain client of one node, connected, to read INFO replication without starting a process. */
async function probe(port) {
  const client = createClient({ url: `redis://127.0.0.1:${port}`, socket: { reconnectStrategy: false } });
  client.on("error", () => {});
  await client.connect();
  return client;
}

/** The offset `name` (and master_link_status) of INFO replication on `client`; `-1` when it does not answer. */
async function replication(client, name) {
  try {
    const info = await client.sendCommand(["INFO", "replication"]);
    return { offset: field(info, name), link: field(info, "master_link_status") };
  } catch {
    return { offset: -1, link: "unread" };
  }
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

/** The node the last trial killed and restarted (its port), `undefined` before the first. */
let restarted;

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
  // Connections of their own to read the offsets at the kill, opened now so that reading them
  // delays the kill by one round trip.
  const [primaryProbe, replicaProbe] = await Promise.all([probe(primary.port), probe(replica.port)]);

  clock.offsetMs = 16 * 60_000;
  // A refresh hands out its tokens even when their write failed, and reports that as an event.
  let refreshFailed = false;
  a.on("storage-failed", () => {
    refreshFailed = true; // with replicas: a REPLICATION_TIMEOUT
  });
  try {
    await a.getAccessToken(); // the refresh: rotated token written (and with replicas, acknowledged by the replica)
  } catch {
    refreshFailed = true;
  }
  const [atPrimary, atReplica] = await Promise.all([
    replication(primaryProbe, "master_repl_offset"),
    replication(replicaProbe, "slave_repl_offset"),
  ]);
  await cluster.nodes[index].kill();
  first.destroy();
  const promoted = await replication(replicaProbe, "slave_repl_offset");
  primaryProbe.destroy();
  replicaProbe.destroy();
  const offsets = {
    primary: atPrimary.offset,
    replica: atReplica.offset,
    link: atReplica.link,
    promoted: promoted.offset,
  };
  cli(replica.port, "CLUSTER", "FAILOVER", "TAKEOVER");
  for (let i = 0; i < 100 && !cli(replica.port, "ROLE").startsWith("master"); i++) await sleep(50);

  clock.offsetMs = 32 * 60_000;
  const second = await connect();
  const b = manager(redisClusterStorage(second, options), sandbox, clock);
  let secondFailed = false;
  b.on("storage-failed", () => {
    secondFailed = true;
  });
  let outcome;
  try {
    await b.getAccessToken();
    outcome = sandbox.ledger.list().reuses.length === 0 ? "kept" : "reuse";
  } catch (error) {
    // SESSION_ENDED: the replica lacked the rotated token, the rotated-away one was presented.
    outcome = error?.code ?? String(error);
  }
  second.destroy();
  const resynced = replica.port === restarted;
  await cluster.restart(index); // rejoins as a replica of the promoted node
  restarted = primary.port;
  await settled();
  return { outcome, refreshFailed, secondFailed, offsets, resynced };
}

try {
  await settled();
  for (const replicas of [false, true]) {
    const mode = replicas ? "replicas: { count: 1, timeoutMs: 1000 }" : "no replicas option";
    const outcomes = {};
    let refreshFailed = 0;
    let secondFailed = 0;
    let behind = 0;
    let lostBehind = 0;
    let lostResynced = 0;
    for (let i = 0; i < TRIALS; i++) {
      const result = await trial(replicas);
      const { primary, replica, link, promoted } = result.offsets;
      console.log(
        `  ${mode}, trial ${i + 1}: ${result.outcome}; offsets at the kill: primary ${primary}, replica ${replica} (link ${link}), replica after the kill ${promoted} (${primary - promoted} behind); its replica resynced after the trial before: ${result.resynced ? "yes" : "no"}`,
      );
      outcomes[result.outcome] = (outcomes[result.outcome] ?? 0) + 1;
      if (result.refreshFailed) refreshFailed++;
      if (result.secondFailed) secondFailed++;
      if (promoted < primary) {
        behind++;
        if (result.outcome !== "kept") lostBehind++;
      }
      if (result.outcome !== "kept" && result.resynced) lostResynced++;
    }
    const others = Object.entries(outcomes)
      .filter(([what]) => what !== "kept")
      .map(([what, n]) => `${what}: ${n}`)
      .join(", ");
    const lost = TRIALS - (outcomes.kept ?? 0);
    console.log(
      `${mode}: session kept in ${outcomes.kept ?? 0} of ${TRIALS} trials${others ? ` (otherwise ${others})` : ""}; ${refreshFailed} refreshes reported STORAGE_FAILED; the second manager's writes failed in ${secondFailed}; the promoted replica was behind the killed primary in ${behind} trials (${lostBehind} of the ${lost} lost); ${lostResynced} of the lost trials were on the pair the trial before had resynced`,
    );
  }
} finally {
  await cluster.stop();
}
