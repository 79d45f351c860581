/**
 * Waking the lock's waiters (issue 28), against a real redis-server: a holder announces its release
 * on `<key>:released`, and a waiter subscribed there takes the lock then, not at its next poll. The
 * protocol is the one every kit speaks (spec/token-store/README.md, "Redis: waking waiters"), so a
 * bare `PUBLISH` (as the Python or Go kit sends it) wakes a waiter too. Without a subscription (an
 * ACL denying it) the lock still works, by polling.
 *
 * The waiters here poll once a minute: one that takes the lock within seconds of the release was
 * woken by the message. The bounds are generous: they tell "woken" from "polled", not fast from slow.
 */
import { createClient } from "redis";
import { describe, expect, inject, it, onTestFinished } from "vitest";
import { redisLock, type RedisClientLike } from "../src/index.js";
import { connect, uniquePrefix } from "./support/helpers.js";

/** A waiter that would poll only once a minute: a message is the only thing that wakes it in time. */
const SLOW_POLL = { retryDelayMs: 60_000, maxRetryDelayMs: 60_000, waitTimeoutMs: 120_000 };
/** Far below SLOW_POLL's first pause (30 to 60 s), far above a wake on a loaded machine. */
const WOKEN_WITHIN_MS = 10_000;

/** A promise and the function that resolves it. */
function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Whether `promise` settled within `ms`, and how. */
async function within<T>(
  promise: Promise<T>,
  ms: number,
): Promise<{ settled: "resolved"; value: T } | { settled: "rejected"; error: unknown } | { settled: "pending" }> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const cap = new Promise<{ settled: "pending" }>((r) => (timer = setTimeout(() => r({ settled: "pending" }), ms)));
  const outcome = await Promise.race([
    promise.then(
      (value) => ({ settled: "resolved" as const, value }),
      (error: unknown) => ({ settled: "rejected" as const, error }),
    ),
    cap,
  ]);
  clearTimeout(timer);
  return outcome;
}

/** Subscribers of `channel` on the server (PUBSUB NUMSUB). */
async function subscribers(client: Awaited<ReturnType<typeof connect>>, channel: string): Promise<number> {
  const reply = (await client.sendCommand(["PUBSUB", "NUMSUB", channel])) as [string, number];
  return Number(reply[1]);
}

/** Resolves once `channel` has `count` subscribers (a waiter subscribed), polling the server. */
async function subscribed(client: Awaited<ReturnType<typeof connect>>, channel: string, count = 1): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if ((await subscribers(client, channel)) === count) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${channel} never had ${count} subscriber(s)`);
}

describe("waking the waiters of a Redis lock", () => {
  it("a holder announces its release on <key>:released with an empty message, once the key is gone", async () => {
    const client = await connect();
    const listener = client.duplicate();
    listener.on("error", () => {});
    await listener.connect();
    onTestFinished(() => listener.destroy());
    const prefix = uniquePrefix();
    const heard: { message: string; keyLeft: number }[] = [];
    const announced = deferred();
    await listener.subscribe(`${prefix}lock:released`, (message) => {
      void client.exists(`${prefix}lock`).then((keyLeft) => {
        heard.push({ message, keyLeft });
        announced.resolve();
      });
    });
    await redisLock(client, { prefix })("lock", async () => {});
    await announced.promise;
    expect(heard).toEqual([{ message: "", keyLeft: 0 }]);
  });

  it("a waiter that polls once a minute takes the lock as soon as the holder lets go", async () => {
    const [holderClient, waiterClient] = await Promise.all([connect(), connect()]);
    const prefix = uniquePrefix();
    const letGo = deferred();
    const holding = redisLock(holderClient, { prefix })("lock", () => letGo.promise);
    await new Promise((r) => setTimeout(r, 50));
    const order: string[] = [];
    const waiting = redisLock(waiterClient, { prefix, ...SLOW_POLL })(
      "lock",
      async () => void order.push("waiter ran"),
    );
    await subscribed(holderClient, `${prefix}lock:released`);

    order.push("holder lets go");
    letGo.resolve();
    await holding;
    expect(await within(waiting, WOKEN_WITHIN_MS)).toEqual({ settled: "resolved", value: undefined });
    expect(order).toEqual(["holder lets go", "waiter ran"]);
  });

  it("a subscribed waiter leaves the backoff to the message: two SETs while the lock is held, one after the release", async () => {
    const [holderClient, waiterClient] = await Promise.all([connect(), connect()]);
    const prefix = uniquePrefix();
    const sets: string[] = [];
    // The waiter's client, counting its SETs; its subscriber is the client's own duplicate.
    const counted: RedisClientLike = {
      sendCommand(args, options) {
        if (args[0] === "SET") sets.push(args[1]!);
        return waiterClient.sendCommand(args, options);
      },
      duplicate: () => waiterClient.duplicate(),
    };
    const letGo = deferred();
    const holding = redisLock(holderClient, { prefix })("lock", () => letGo.promise);
    await new Promise((r) => setTimeout(r, 50));
    // A backoff from 1 ms doubling to a minute: polling on it, the waiter would send a SET at 1, 2,
    // 4, 8… ms, seven or more while the lock is held below; subscribed, it sends none of them.
    const waiting = redisLock(counted, { prefix, retryDelayMs: 1, maxRetryDelayMs: 60_000, waitTimeoutMs: 120_000 })(
      "lock",
      async () => "taken",
    );
    await subscribed(holderClient, `${prefix}lock:released`);
    await new Promise((r) => setTimeout(r, 500));
    letGo.resolve();
    await holding;
    expect(await within(waiting, WOKEN_WITHIN_MS)).toEqual({ settled: "resolved", value: "taken" });
    // Refused before and right after subscribing, taken on the release's message (two, when the
    // second try already found the lock let go on a very slow machine).
    expect(sets.length).toBeLessThanOrEqual(3);
    expect(new Set(sets)).toEqual(new Set([`${prefix}lock`]));
  });

  it("opens one subscriber connection per client, keeps it for the next waits, and closes it with the client", async () => {
    const admin = await connect();
    const prefix = uniquePrefix();
    const channel = `${prefix}lock:released`;
    // Named, so that the count is of this client's connections only (test files share the server).
    const name = `waker-${crypto.randomUUID()}`;
    const connections = async () =>
      String(await admin.sendCommand(["CLIENT", "LIST"]))
        .split("\n")
        .filter((line) => line.includes(` name=${name} `)).length;
    const waiterClient = createClient({ url: inject("redisUrl"), name });
    waiterClient.on("error", () => {});
    await waiterClient.connect();
    onTestFinished(() => (waiterClient.isOpen ? waiterClient.destroy() : undefined));
    expect(await connections()).toBe(1);
    for (let wait = 0; wait < 2; wait++) {
      await admin.set(`${prefix}lock`, "another-owner", { PX: 60_000 });
      const waiting = redisLock(waiterClient, { prefix, ...SLOW_POLL })("lock", async () => "taken");
      await subscribed(admin, channel);
      await admin.del(`${prefix}lock`);
      await admin.publish(channel, "");
      expect(await within(waiting, WOKEN_WITHIN_MS)).toEqual({ settled: "resolved", value: "taken" });
      // The client's own and one subscriber (its duplicate), not one more per wait.
      expect(await connections()).toBe(2);
      expect(await subscribers(admin, channel)).toBe(1);
    }
    await waiterClient.close();
    await subscribed(admin, channel, 0);
    expect(await connections()).toBe(0);
  });

  it("wakes on a release any kit announces: a DEL and a bare PUBLISH of the empty message", async () => {
    const [client, waiterClient] = await Promise.all([connect(), connect()]);
    const prefix = uniquePrefix();
    await client.set(`${prefix}lock`, "another-kit-owner", { PX: 60_000 });
    const waiting = redisLock(waiterClient, { prefix, ...SLOW_POLL })("lock", async () => "taken");
    await subscribed(client, `${prefix}lock:released`);
    await client.del(`${prefix}lock`);
    await client.publish(`${prefix}lock:released`, "");
    expect(await within(waiting, WOKEN_WITHIN_MS)).toEqual({ settled: "resolved", value: "taken" });
  });

  it("ends a wait without the lock when `until` says so on the wake (the token manager's fresh-tokens check)", async () => {
    const [holderClient, waiterClient] = await Promise.all([connect(), connect()]);
    const prefix = uniquePrefix();
    let stored = false;
    const letGo = deferred();
    const holding = redisLock(holderClient, { prefix })("lock", async () => {
      await letGo.promise;
      stored = true; // what the holder's refresh leaves behind
    });
    await new Promise((r) => setTimeout(r, 50));
    let ran = false;
    const task = async () => {
      ran = true;
    };
    const waiting = redisLock(waiterClient, { prefix, ...SLOW_POLL })("lock", task, { until: async () => stored });
    await subscribed(holderClient, `${prefix}lock:released`);
    letGo.resolve();
    await holding;
    const outcome = await within(waiting, WOKEN_WITHIN_MS);
    expect(outcome).toMatchObject({ settled: "rejected", error: { name: "LockWaitEnded", code: "LOCK_WAIT_ENDED" } });
    expect(ran).toBe(false);
  });

  it("polls when it may not subscribe (an ACL without SUBSCRIBE and PUBLISH): the lock works as before", async () => {
    const admin = await connect();
    const prefix = uniquePrefix();
    const user = `no-pubsub-${crypto.randomUUID()}`;
    await admin.sendCommand([
      "ACL",
      "SETUSER",
      user,
      "on",
      ">waker-test",
      "~*",
      "&*",
      "+@all",
      "-subscribe",
      "-publish",
    ]);
    onTestFinished(async () => void (await admin.sendCommand(["ACL", "DELUSER", user])));
    const url = new URL(admin.options?.url ?? "");
    const restricted = async () => {
      const client = createClient({ url: `redis://${encodeURIComponent(user)}:waker-test@${url.host}` });
      const whoami = async () => String(await client.sendCommand(["ACL", "WHOAMI"]));
      client.on("error", () => {});
      await client.connect();
      onTestFinished(() => client.destroy());
      expect(await whoami()).toBe(user);
      return client;
    };
    const [holderClient, waiterClient] = await Promise.all([restricted(), restricted()]);
    const letGo = deferred();
    const holding = redisLock(holderClient, { prefix })("lock", () => letGo.promise);
    await new Promise((r) => setTimeout(r, 50));
    const waiting = redisLock(waiterClient, { prefix, retryDelayMs: 20, maxRetryDelayMs: 50 })(
      "lock",
      async () => "taken",
    );
    await new Promise((r) => setTimeout(r, 200));
    expect(await subscribers(admin, `${prefix}lock:released`)).toBe(0);
    letGo.resolve();
    await expect(holding).resolves.toBeUndefined(); // its PUBLISH was refused: the release stands
    await expect(waiting).resolves.toBe("taken");
    expect(await admin.exists(`${prefix}lock`)).toBe(0);
  });
});
