// Failover, measured (issue 36): whether a session survives a Redis Cluster failover lived through
// by long-running processes, with and without the `replicas` (WAIT) option. The protocol of the Go
// kit's packages/go/internal/cmd/failover and the Python kit's scripts/failover_trials.py, so the
// kits' figures compare. Not part of `pnpm test` (it is a measurement, not a check): run it from
// this package after `pnpm run build`:
//
//   node scripts/failover-trials.mjs [--settle connected] [--processes 3] [--topology-refresh MS]
//                                    [trials per mode, default 20]
//
// `--topology-refresh MS` gives each cluster client node-redis's
// `topologyRefreshOnReconnectionAttemptStrategy: MS` (how long after a node's connection is lost the
// client reloads the cluster's slot map; node-redis's default is 5 000 ms), the option the README
// recommends; without it the clients have node-redis's defaults.
//
// Each trial, on a 3-primary cluster with a replica per primary: three token managers (the
// "processes"), each on a node-redis cluster client of its own with node-redis's defaults, as three
// processes would have, sign in (the first) and read the session (all), so that every client holds
// connections to the session's primary and its slot map. The tenant's clock passes the access
// token's expiry and the first manager refreshes; when its refresh request leaves (the managers'
// `fetch`, before the request is answered), the primary of the session's slot is killed (SIGKILL)
// and its replica promoted (CLUSTER FAILOVER TAKEOVER, until every live node lists it as a
// primary); then the tenant answers (it rotates the refresh token) and the refresh writes the new
// tokens on a cluster whose primary changed. The same three managers, their clients never remade,
// then need a token after the next expiry: each asks, and asks again every 250 ms after a failure,
// for at most 30 s. Two modes: the killed node comes back (restarted: it rejoins as a replica of
// the promoted one) once the refresh's call has returned, or it stays down until the trial ends.
// The session is kept when every manager got a token after the second expiry and the tenant saw no
// refresh token presented twice. Then the killed node is restarted if it is down, and the next
// trial waits until the cluster has settled: every primary's replica has received a probe write
// made on its primary (see `replicated`; `--settle connected` waits only for a connected replica
// not in a bulk transfer, the earlier protocol, to compare).
import { spawnSync } from "node:child_process";
import { parseArgs } from "node:util";
import { createCluster } from "redis";
import { createSandbox } from "@tenant-integration/sandbox";
import { createTokenManager } from "@tenant-integration/token-manager";
import { redisClusterStorage } from "../dist/index.js";
import { cli, startRedisCluster } from "../test/support/redis-cluster.mjs";

const { values, positionals } = parseArgs({
  options: {
    settle: { type: "string", default: "caught-up" },
    processes: { type: "string", default: "3" },
    "topology-refresh": { type: "string" },
  },
  allowPositionals: true,
});
const TRIALS = Number(positionals[0] ?? 20);
if (!Number.isInteger(TRIALS) || TRIALS < 1)
  throw new Error(`the number of trials per mode is a positive integer, not ${positionals[0]}`);
if (values.settle !== "caught-up" && values.settle !== "connected")
  throw new Error(`--settle is caught-up or connected, not ${values.settle}`);
const PROCESSES = Number(values.processes);
if (!Number.isInteger(PROCESSES) || PROCESSES < 1)
  throw new Error(`--processes is a positive integer, not ${values.processes}`);
const CAUGHT_UP = values.settle === "caught-up";
const TOPOLOGY_REFRESH_MS = values["topology-refresh"] === undefined ? undefined : Number(values["topology-refresh"]);
if (TOPOLOGY_REFRESH_MS !== undefined && !(Number.isInteger(TOPOLOGY_REFRESH_MS) && TOPOLOGY_REFRESH_MS > 0))
  throw new Error(`--topology-refresh is a positive number of milliseconds, not ${values["topology-refresh"]}`);
const CLIENT = "failover-demo";
const REDIRECT = "http://127.0.0.1:53682/callback";
const ORIGIN = "http://127.0.0.1:4020";
/** How long a manager keeps asking for a token after the second expiry, and how often. */
const ASK_FOR_MS = 30_000;
const ASK_EVERY_MS = 250;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const cluster = await startRedisCluster({ primaries: 3, replicas: 1, nodeTimeoutMs: 1_000 });
console.log(
  `${cluster.version}; node-redis ${JSON.parse(spawnSync("node", ["-p", "JSON.stringify(require('redis/package.json').version)"], { encoding: "utf8" }).stdout)}; ${PROCESSES} long-lived token managers per trial; ${TOPOLOGY_REFRESH_MS === undefined ? "node-redis defaults" : `topologyRefreshOnReconnectionAttemptStrategy: ${TOPOLOGY_REFRESH_MS}`}; ${
    CAUGHT_UP
      ? "settled: every replica has received a probe write made on its primary"
      : "settled (earlier protocol): every primary has a connected replica not in a bulk transfer"
  }`,
);

/** The cluster's view from a live node: id, port, role, the primary a replica follows, and the slot ranges of a primary. */
function view() {
  return cli(cluster.nodes.find(answers).port, "CLUSTER", "NODES")
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

/** Whether the node answers PING. */
function answers(node) {
  try {
    return cli(node.port, "PING") === "PONG";
  } catch {
    return false;
  }
}

/** The nodes that answer. */
const live = () => cluster.nodes.filter(answers);

/** Waits until every live node says the cluster is ok and each primary's replica has caught up (see `replicated`). */
async function settled() {
  for (let i = 0; i < 600; i++) {
    const answering = live();
    const ok =
      answering.length === cluster.nodes.length &&
      answering.every((node) => cli(node.port, "CLUSTER", "INFO").includes("cluster_state:ok"));
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

/**
 * Promotes the replica at `port` in place of its primary (CLUSTER FAILOVER TAKEOVER: at once, without
 * the primary's agreement or a vote, so also when the primary is dead) and resolves once every live
 * node's CLUSTER NODES lists it as a primary.
 */
async function promote(port) {
  cli(port, "CLUSTER", "FAILOVER", "TAKEOVER");
  const id = cli(port, "CLUSTER", "MYID");
  const listsAsPrimary = (node) =>
    cli(node.port, "CLUSTER", "NODES")
      .split("\n")
      .some((line) => line.startsWith(`${id} `) && line.split(" ")[2].includes("master"));
  for (let i = 0; i < 600; i++) {
    if (live().every(listsAsPrimary)) return;
    await sleep(50);
  }
  throw new Error(`the promotion of 127.0.0.1:${port} was not seen within 30 s`);
}

/**
 * A node-redis cluster client of its own (node-redis's defaults, or the README's topology refresh
 * with --topology-refresh), started from the nodes that are not failed.
 */
async function connect() {
  const client = createCluster({
    rootNodes: view()
      .filter((n) => !n.failed)
      .map((n) => ({ url: `redis://127.0.0.1:${n.port}` })),
    ...(TOPOLOGY_REFRESH_MS === undefined ? {} : { topologyRefreshOnReconnectionAttemptStrategy: TOPOLOGY_REFRESH_MS }),
  });
  client.on("error", () => {}); // a dead node's refused connections are counted in the figures, not logged each time
  await client.connect();
  return client;
}

function manager(storage, clock, fetch) {
  return createTokenManager({
    baseUrl: ORIGIN,
    clientId: CLIENT,
    redirectUri: REDIRECT,
    scopes: ["profile:read"],
    storage,
    fetch,
    now: () => Date.now() + clock.offsetMs,
  });
}

/** The error code of a call, or `undefined` when it got a token. */
async function ask(m) {
  try {
    await m.getAccessToken();
    return undefined;
  } catch (error) {
    return error?.code ?? String(error);
  }
}

/** Asks `m` for a token, and again every ASK_EVERY_MS after a failure, for at most ASK_FOR_MS: the codes of the failed calls, and the last if it got none. */
async function askUntilServed(m, start) {
  const failed = [];
  for (;;) {
    const code = await ask(m);
    if (code === undefined) return { failed };
    failed.push(code);
    if (Date.now() - start > ASK_FOR_MS) return { failed, missing: code };
    await sleep(ASK_EVERY_MS);
  }
}

/** "n (CODE: n, …)" of a list of codes. */
function counted(codes) {
  const by = {};
  for (const code of codes) by[code] = (by[code] ?? 0) + 1;
  const parts = Object.entries(by).map(([code, n]) => `${code}: ${n}`);
  return `${codes.length}${parts.length > 0 ? ` (${parts.join(", ")})` : ""}`;
}

async function trial({ back, replicas }) {
  const sandbox = createSandbox({ clients: [{ id: CLIENT, redirectUris: [REDIRECT] }], autoApprove: true });
  const clock = { offsetMs: 0 };
  const prefix = `trial-${crypto.randomUUID()}:`;
  const options = { prefix, ...(replicas ? { replicas: { count: 1, timeoutMs: 1_000 } } : {}) };
  // While armed, the first token request runs the failover before it is answered.
  const armed = { failover: undefined, fired: false, error: undefined };
  const fetch = async (input, init) => {
    const request = new Request(input, init);
    if (armed.failover && request.method === "POST" && new URL(request.url).pathname.endsWith("/oauth/token")) {
      const failover = armed.failover;
      armed.failover = undefined;
      armed.fired = true;
      await failover().catch((error) => {
        armed.error = error;
      });
    }
    return sandbox.fetch(request);
  };
  let storageFailed = 0;
  const processes = [];
  try {
    for (let i = 0; i < PROCESSES; i++) {
      const client = await connect();
      const m = manager(redisClusterStorage(client, options), clock, fetch);
      m.on("storage-failed", () => {
        storageFailed++;
      });
      processes.push({ client, m });
    }
    const { url } = await processes[0].m.beginAuthorization();
    const approved = await sandbox.fetch(new Request(url, { redirect: "manual" }));
    await processes[0].m.completeAuthorization(approved.headers.get("location") ?? "");
    for (const { m } of processes) await m.getAccessToken(); // every client talks to the session's primary
    const slot = Number(
      cli(cluster.nodes[0].port, "CLUSTER", "KEYSLOT", `${prefix}tenant-integration:{${ORIGIN}:${CLIENT}}:tokens`),
    );
    const primary = view().find((n) => n.primary && owns(n, slot));
    const replica = view().find((n) => !n.primary && n.primaryId === primary.id);
    const index = cluster.nodes.findIndex((node) => node.port === primary.port);

    clock.offsetMs += 16 * 60_000;
    armed.failover = async () => {
      await cluster.nodes[index].kill();
      await promote(replica.port);
    };
    const refreshed = Date.now();
    const first = await ask(processes[0].m); // the refresh, by the first manager alone
    const refreshTookMs = Date.now() - refreshed;
    if (!armed.fired || armed.error)
      throw new Error(`the failover at the refresh (run: ${armed.fired}): ${armed.error}`);
    if (back) await cluster.restart(index); // rejoins as a replica of the promoted node

    clock.offsetMs += 16 * 60_000;
    const start = Date.now();
    const served = await Promise.all(processes.map(({ m }) => askUntilServed(m, start)));
    const allHadTokenMs = Date.now() - start;
    const missing = served.flatMap((s) => (s.missing ? [s.missing] : [])).sort();
    let outcome = missing.length > 0 ? `no token: ${missing.join(", ")}` : "kept";
    if (sandbox.ledger.list().reuses.length > 0) outcome = "reuse";
    if (!back) await cluster.restart(index);
    return {
      outcome,
      first,
      refreshTookMs,
      storageFailed,
      allHadTokenMs,
      secondFailed: served.flatMap((s) => s.failed),
    };
  } finally {
    for (const { client } of processes) client.destroy();
  }
}

const median = (sorted) => sorted[Math.floor(sorted.length / 2)];
const ms = (n) => `${(n / 1000).toFixed(3)}s`;

try {
  await settled();
  const modes = [
    { back: true, replicas: false },
    { back: false, replicas: false },
    { back: true, replicas: true },
    { back: false, replicas: true },
  ];
  for (const mode of modes) {
    const name = `${mode.back ? "dead node back after the first calls" : "dead node stays down"}, ${
      mode.replicas ? "replicas: { count: 1, timeoutMs: 1000 }" : "no replicas option"
    }`;
    const results = [];
    for (let i = 0; i < TRIALS; i++) {
      const r = await trial(mode);
      await settled();
      console.log(
        `  ${name}, trial ${i + 1}: ${r.outcome}; the refresh through the failover: ${r.first ?? "a token"} in ${ms(r.refreshTookMs)}; storage-failed events: ${r.storageFailed}; after the next expiry every manager had a token in ${ms(r.allHadTokenMs)} (calls failed before: ${counted(r.secondFailed)})`,
      );
      results.push(r);
    }
    const outcomes = {};
    for (const r of results) outcomes[r.outcome] = (outcomes[r.outcome] ?? 0) + 1;
    const others = Object.entries(outcomes)
      .filter(([what]) => what !== "kept")
      .map(([what, n]) => `${what}: ${n}`)
      .join(", ");
    const refreshes = results.map((r) => r.refreshTookMs).sort((a, b) => a - b);
    const times = results
      .filter((r) => r.outcome === "kept")
      .map((r) => r.allHadTokenMs)
      .sort((a, b) => a - b);
    const sum = (f) => results.reduce((n, r) => n + f(r), 0);
    console.log(
      `${name}: session kept in ${outcomes.kept ?? 0} of ${TRIALS} trials${others ? ` (otherwise ${others})` : ""}; the refresh through the failover failed in ${sum((r) => (r.first ? 1 : 0))} and took ${ms(median(refreshes))} (median), ${ms(refreshes.at(-1))} (longest); ${sum((r) => r.storageFailed)} storage-failed events; calls failed after the next expiry: ${counted(results.flatMap((r) => r.secondFailed))}${
        times.length > 0
          ? `; after the next expiry every manager had a token within ${ms(median(times))} (median), ${ms(times.at(-1))} (longest)`
          : ""
      }`,
    );
  }
} finally {
  await cluster.stop();
}
