/**
 * redisClusterStorage and redisClusterLock against a real Redis Cluster (issue 31), started here from
 * Debian's redis-server: three primaries with a replica each, on loopback ports chosen at run time.
 * The keys of a session share one slot; a fleet on the cluster makes one refresh per expiry; a
 * waiter is woken by a release published on another node; `replicas` (WAIT) is asked of the node
 * that took the write; a node that stops answering, or a cluster that is down, is STORAGE_FAILED
 * naming the key, and nothing stored is lost; and
 * the session's slot migrating (CLUSTER SETSLOT, MIGRATE) while a fleet refreshes keeps the session.
 */
import { createCluster } from "redis";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { redisClusterLock, redisClusterStorage, redisStorage, type RedisClusterLike } from "../src/index.js";
import { inProcessSandbox, managerFor, signIn, uniquePrefix } from "./support/helpers.js";
import { cli, startRedisCluster, type RunningRedisCluster } from "./support/redis-cluster.mjs";

const SESSION = "tenant-integration:http://127.0.0.1:4020:fleet-demo";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let cluster: RunningRedisCluster;

beforeAll(async () => {
  cluster = await startRedisCluster({ primaries: 3, replicas: 1 });
  // Which server ran, in the test output (the README names the versions checked).
  console.log(`Redis Cluster of ${cluster.nodes.length} nodes (3 primaries, 1 replica each): ${cluster.version}`);
});
afterAll(() => cluster?.stop());

/** A connected cluster client (its own connections: another process, in effect), closed when the test ends. */
async function connectCluster(urls = cluster.urls, more: { commandTimeoutMs?: number } = {}) {
  const client = createCluster({
    rootNodes: urls.map((url) => ({ url })),
    defaults: { socket: { reconnectStrategy: () => 50, connectTimeout: 2_000 } },
    ...more,
  });
  client.on("error", () => {});
  await client.connect();
  onTestFinished(() => client.destroy());
  return client;
}

/** The slot of `key`, as the cluster computes it. */
const keyslot = (key: string) => Number(cli(cluster.nodes[0]!.port, "CLUSTER", "KEYSLOT", key));

describe("redisClusterStorage", () => {
  it("accepts a node-redis cluster client as RedisClusterLike (a type check)", async () => {
    const client: RedisClusterLike = await connectCluster();
    expect(typeof redisClusterStorage(client).lock).toBe("function");
  });

  it("keeps the four keys of a session in one slot, and stores what a single-server client of that node reads", async () => {
    const client = await connectCluster();
    const prefix = uniquePrefix();
    const sandbox = inProcessSandbox();
    const tm = managerFor(redisClusterStorage(client, { prefix }), sandbox);
    await signIn(tm, sandbox);
    const tokensKey = `${prefix}tenant-integration:{http://127.0.0.1:4020:fleet-demo}:tokens`;
    const slots = new Set(
      ["tokens", "pending", "intent", "lock", "lock:released"].map((kind) =>
        keyslot(`${prefix}tenant-integration:{http://127.0.0.1:4020:fleet-demo}:${kind}`),
      ),
    );
    expect(slots.size).toBe(1);
    expect(JSON.parse((await client.get(tokensKey)) ?? "null")).toMatchObject({ session: expect.any(String) });
    // The same key through redisStorage on a single server (one scheme, no mode switch): move the value, read it back.
    const { createClient } = await import("redis");
    const single = createClient({ url: (await startSingle()).url });
    await single.connect();
    onTestFinished(() => single.destroy());
    await single.set(tokensKey, (await client.get(tokensKey))!);
    const onSingle = managerFor(redisStorage(single, { prefix }), sandbox);
    expect(await onSingle.getAccessToken()).toBe(await tm.getAccessToken());
  });

  it("makes one refresh per expiry across a fleet of managers, each on its own cluster connections", async () => {
    const prefix = uniquePrefix();
    const sandbox = inProcessSandbox();
    const clock = { offsetMs: 0 };
    const fleet = await Promise.all(
      Array.from({ length: 4 }, async () =>
        managerFor(redisClusterStorage(await connectCluster(), { prefix }), sandbox, clock),
      ),
    );
    await signIn(fleet[0]!, sandbox);
    const refreshes = () => sandbox.sandbox.events().filter((e) => e.grantType === "refresh_token").length;
    for (let expiry = 1; expiry <= 3; expiry++) {
      clock.offsetMs = expiry * 16 * 60_000;
      const tokens = await Promise.all(fleet.map((tm) => tm.getAccessToken()));
      expect(new Set(tokens).size).toBe(1);
      expect(refreshes()).toBe(expiry);
    }
    expect(sandbox.sandbox.ledger.list().reuses).toEqual([]);
  });

  it("waits for a replica of the node that took the write (replicas: WAIT)", async () => {
    const client = await connectCluster();
    const prefix = uniquePrefix();
    const storage = redisClusterStorage(client, { prefix, replicas: { count: 1, timeoutMs: 5_000 } });
    await storage.set(`${SESSION}:tokens`, "v");
    expect(await storage.get(`${SESSION}:tokens`)).toBe("v");
    // Each primary has one replica: two are never there, and WAIT says so.
    const error = await redisClusterStorage(client, { prefix, replicas: { count: 2, timeoutMs: 50 } })
      .set(`${SESSION}:tokens`, "v2")
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      name: "RedisStorageError",
      code: "REPLICATION_TIMEOUT",
      message: expect.not.stringContaining("v2"),
    });
  });
});

describe("redisClusterLock", () => {
  it("runs tasks one at a time, and wakes a waiter on another connection by the release's PUBLISH", async () => {
    const prefix = uniquePrefix();
    const holder = redisClusterLock(await connectCluster(), { prefix });
    // A waiter that would poll only once a minute: taking the lock within seconds means the message woke it.
    const waiter = redisClusterLock(await connectCluster([cluster.urls[2]!]), {
      prefix,
      retryDelayMs: 60_000,
      maxRetryDelayMs: 60_000,
      waitTimeoutMs: 120_000,
    });
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let taken!: () => void;
    const holding = new Promise<void>((r) => (taken = r));
    const first = holder(`${SESSION}:lock`, async () => {
      order.push("holder");
      taken();
      await held;
    });
    await holding;
    const second = waiter(`${SESSION}:lock`, async () => void order.push("waiter"));
    await sleep(300); // the waiter tried, and subscribed
    release();
    await first;
    const outcome = await Promise.race([second.then(() => "woken"), sleep(10_000).then(() => "still waiting")]);
    expect(outcome).toBe("woken");
    expect(order).toEqual(["holder", "waiter"]);
  });
});

/** A single redis-server for the one test that moves a value off the cluster. */
async function startSingle() {
  const { startRedisServer } = await import("@tenant-integration/test-support/redis-server");
  const server = await startRedisServer();
  onTestFinished(() => server.stop());
  return server;
}

describe("a cluster in trouble", () => {
  it("a stopped primary of the session's slot is STORAGE_FAILED within commandTimeoutMs, and nothing stored is lost", async () => {
    const small = await startRedisCluster({ primaries: 3, replicas: 0, nodeTimeoutMs: 60_000 });
    onTestFinished(() => small.stop());
    const client = await connectCluster(small.urls);
    const sandbox = inProcessSandbox();
    const clock = { offsetMs: 0 };
    const storage = redisClusterStorage(client, { commandTimeoutMs: 500 });
    const tm = managerFor(storage, sandbox, clock);
    await signIn(tm, sandbox);
    const stored = await client.get("tenant-integration:{http://127.0.0.1:4020:fleet-demo}:tokens");
    const slot = Number(
      cli(small.nodes[0]!.port, "CLUSTER", "KEYSLOT", "tenant-integration:{http://127.0.0.1:4020:fleet-demo}:tokens"),
    );
    const owner = small.nodes.find((n) => cli(n.port, "CLUSTER", "COUNTKEYSINSLOT", String(slot)) === "1")!;
    process.kill(owner.pid, "SIGSTOP");
    try {
      clock.offsetMs = 16 * 60_000;
      // Another manager (its own memory) on the connected cluster client: a client connecting now would wait for the stopped node.
      const other = managerFor(redisClusterStorage(client, { commandTimeoutMs: 500 }), sandbox, clock);
      const error = await other.getAccessToken().catch((e: unknown) => e);
      expect(error).toMatchObject({ name: "TokenManagerError", code: "STORAGE_FAILED" });
      // The why is in the cause chain: which command, which key, no answer in time.
      const chain: string[] = [];
      for (let e = error as Error | undefined; e; e = e.cause as Error | undefined) chain.push(e.message);
      expect(chain.join(" / ")).toMatch(
        /tenant-integration:\{http:\/\/127\.0\.0\.1:4020:fleet-demo\}:\w+ got no answer within 500 ms/,
      );
      expect(sandbox.sandbox.events().filter((e) => e.grantType === "refresh_token")).toEqual([]);
    } finally {
      process.kill(owner.pid, "SIGCONT");
    }
    expect(await client.get("tenant-integration:{http://127.0.0.1:4020:fleet-demo}:tokens")).toBe(stored);
    // Back: the fleet refreshes once, from the stored session.
    expect(await tm.getAccessToken()).toEqual(expect.any(String));
    expect(sandbox.sandbox.ledger.list().reuses).toEqual([]);
  });

  it("a lock SET NX that timed out on a stopped primary and ran when it resumed is released at once, announced, so nobody waits out the lease (DECISIONS D4)", async () => {
    const small = await startRedisCluster({ primaries: 3, replicas: 0, nodeTimeoutMs: 60_000 });
    onTestFinished(() => small.stop());
    const client = await connectCluster(small.urls);
    const listener = await connectCluster(small.urls);
    const key = `${SESSION.replace("tenant-integration:", "tenant-integration:{")}}:lock`;
    // the primary of the lock's slot: the one a key of that slot lands on
    await client.set(key, "probe");
    const slot = keyslot(key);
    const owner = small.nodes.find((n) => cli(n.port, "CLUSTER", "COUNTKEYSINSLOT", String(slot)) === "1")!;
    await client.del(key);
    const announced = new Promise<boolean>((resolve) => {
      void listener.subscribe(`${key}:released`, () => resolve(true));
    });
    await sleep(100); // the subscription is confirmed before the primary stops
    const lock = redisClusterLock(client, { commandTimeoutMs: 300, leaseMs: 60_000 });
    process.kill(owner.pid, "SIGSTOP");
    try {
      await expect(lock(`${SESSION}:lock`, async () => {})).rejects.toMatchObject({
        code: "STORAGE_FAILED",
        cause: { code: "LOCK_UNAVAILABLE" },
      });
    } finally {
      process.kill(owner.pid, "SIGCONT"); // the SET NX runs now, and takes the lock for a minute
    }
    expect(await Promise.race([announced, sleep(5_000).then(() => false)])).toBe(true);
    expect(await client.exists(key)).toBe(0);
    await expect(lock(`${SESSION}:lock`, async () => "taken")).resolves.toBe("taken");
  });

  it("a cluster that is down (the session's primary killed, no replica to promote) is STORAGE_FAILED saying why, within commandTimeoutMs", async () => {
    const small = await startRedisCluster({ primaries: 3, replicas: 0, nodeTimeoutMs: 500 });
    onTestFinished(() => small.stop());
    const client = await connectCluster(small.urls);
    const sandbox = inProcessSandbox();
    const clock = { offsetMs: 0 };
    const tm = managerFor(redisClusterStorage(client, { commandTimeoutMs: 2_000 }), sandbox, clock);
    await signIn(tm, sandbox);
    const slot = Number(
      cli(small.nodes[0]!.port, "CLUSTER", "KEYSLOT", "tenant-integration:{http://127.0.0.1:4020:fleet-demo}:tokens"),
    );
    const owner = small.nodes.findIndex((n) => cli(n.port, "CLUSTER", "COUNTKEYSINSLOT", String(slot)) === "1");
    await small.nodes[owner]!.kill();
    const alive = small.nodes.filter((_, i) => i !== owner);
    for (let i = 0; i < 200 && !alive.every((n) => cli(n.port, "CLUSTER", "INFO").includes("cluster_state:fail")); i++)
      await sleep(50);
    expect(cli(alive[0]!.port, "CLUSTER", "INFO")).toContain("cluster_state:fail");

    clock.offsetMs = 16 * 60_000;
    const error = await tm.getAccessToken().catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "TokenManagerError", code: "STORAGE_FAILED" });
    const chain: string[] = [];
    for (let e = error as Error | undefined; e; e = e.cause as Error | undefined) chain.push(e.message);
    // node-redis queues the command while it reconnects to the dead node: the deadline ends it (or a refused connection, or CLUSTERDOWN).
    expect(chain.join(" / ")).toMatch(
      /tenant-integration:\{http:\/\/127\.0\.0\.1:4020:fleet-demo\}:\w+ (got no answer within 2000 ms|failed: Redis (could not be reached|answered an error \(CLUSTERDOWN\)))/,
    );
    expect(sandbox.sandbox.events().filter((e) => e.grantType === "refresh_token")).toEqual([]);
  });

  it("keeps the session while its slot migrates between primaries (CLUSTER SETSLOT, MIGRATE) under a refreshing fleet", async () => {
    const prefix = uniquePrefix();
    const sandbox = inProcessSandbox();
    const clock = { offsetMs: 0 };
    const fleet = await Promise.all(
      Array.from({ length: 3 }, async () =>
        managerFor(redisClusterStorage(await connectCluster(), { prefix }), sandbox, clock),
      ),
    );
    await signIn(fleet[0]!, sandbox);
    const tokensKey = `${prefix}tenant-integration:{http://127.0.0.1:4020:fleet-demo}:tokens`;
    const slot = keyslot(tokensKey);
    const primaries = cluster.nodes.filter((n) => cli(n.port, "ROLE").startsWith("master"));
    const ids = new Map(primaries.map((n) => [n.port, cli(n.port, "CLUSTER", "MYID")]));
    // The tokens key is there after the sign-in: its node serves the slot.
    let owner = primaries.find((n) => cli(n.port, "CLUSTER", "COUNTKEYSINSLOT", String(slot)) !== "0")!;

    /** Moves `slot` from its primary to the next one, a key at a time, pausing between steps so that commands meet every stage. */
    const migrate = async () => {
      const from = owner;
      const to = primaries[(primaries.indexOf(from) + 1) % primaries.length]!;
      cli(to.port, "CLUSTER", "SETSLOT", String(slot), "IMPORTING", ids.get(from.port)!);
      cli(from.port, "CLUSTER", "SETSLOT", String(slot), "MIGRATING", ids.get(to.port)!);
      for (;;) {
        const keys = cli(from.port, "CLUSTER", "GETKEYSINSLOT", String(slot), "1").split("\n").filter(Boolean);
        if (keys.length === 0) break;
        cli(from.port, "MIGRATE", "127.0.0.1", String(to.port), keys[0]!, "0", "5000");
        await sleep(30);
      }
      for (const node of [to, from, ...primaries.filter((n) => n !== to && n !== from)])
        cli(node.port, "CLUSTER", "SETSLOT", String(slot), "NODE", ids.get(to.port)!);
      owner = to;
    };

    const outcomes: unknown[] = [];
    let moving = true;
    const mover = (async () => {
      for (let i = 0; i < 3; i++) await migrate();
      moving = false;
    })();
    for (let expiry = 1; moving || expiry <= 2; expiry++) {
      clock.offsetMs = expiry * 16 * 60_000;
      outcomes.push(...(await Promise.all(fleet.map((tm) => tm.getAccessToken().catch((e: unknown) => e)))));
    }
    await mover;
    // Every call got a token or the documented typed error; none lost the session.
    for (const outcome of outcomes) {
      if (typeof outcome !== "string")
        expect(outcome).toMatchObject({ name: "TokenManagerError", code: "STORAGE_FAILED" });
    }
    expect(outcomes.some((o) => typeof o === "string")).toBe(true);
    expect(sandbox.sandbox.ledger.list().reuses).toEqual([]);
    clock.offsetMs += 16 * 60_000;
    const after = await Promise.all(fleet.map((tm) => tm.getAccessToken()));
    expect(new Set(after).size).toBe(1);
    expect(await fleet[0]!.getAccessToken()).toBe(after[0]);
  });
});
