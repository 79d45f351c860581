/**
 * The refresh lock's promises across real processes against a real PostgreSQL and the sandbox (strict
 * rotation: a rotated-away refresh token presented again revokes the family, RFC 9700 §4.14.2). Every
 * worker is a separate Node process running the BUILT package with a pool of its own. This file starts
 * a server of its own: it terminates backends and restarts PostgreSQL under the fleet.
 */
import pg from "pg";
import { startPostgres, type RunningPostgres } from "@tenant-integration/postgres-testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureSchema } from "../src/index.js";
import { uniqueTable } from "./support/helpers.js";
import {
  lastSeq,
  refreshesSince,
  serveSandbox,
  startWorker,
  stopAll,
  together,
  type Worker,
} from "./support/processes.js";

const USER = { status: 200, user: "Ada Lovelace" };

let server: RunningPostgres;
let sandbox: Awaited<ReturnType<typeof serveSandbox>>;
let admin: pg.Pool;

beforeAll(async () => {
  [server, sandbox] = await Promise.all([startPostgres(), serveSandbox()]);
  admin = new pg.Pool({ connectionString: server.url, max: 2 });
  admin.on("error", () => {});
});

afterAll(async () => {
  await admin?.end().catch(() => {});
  await sandbox?.close();
  await server?.close();
});

/** A fresh table and `n` workers on it, the first signed in. */
async function fleet(n: number, storageOptions: object = {}): Promise<Worker[]> {
  const table = uniqueTable();
  await ensureSchema(admin, { table });
  const workers = await Promise.all(
    Array.from({ length: n }, () => startWorker(sandbox.url, server.url, table, storageOptions)),
  );
  workers[0]!.send({ cmd: "sign-in", offsetMs: sandbox.offsetMs() });
  expect(await workers[0]!.next()).toEqual({ signedIn: true });
  return workers;
}

/** The server process holding an advisory lock (the refresh lock of the fleet's one session), once there is one. */
async function lockHolderBackend(): Promise<number> {
  for (;;) {
    const { rows } = await admin.query<{ pid: number }>(
      "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted",
    );
    if (rows.length === 1) return rows[0]!.pid;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("processes sharing one PostgreSQL", () => {
  it("make one refresh per expiry when released together after it, and every one gets the user", async () => {
    const workers = await fleet(8);
    try {
      for (let expiry = 0; expiry < 2; expiry++) {
        sandbox.expire();
        const seq = lastSeq(sandbox);
        const answers = await together(workers, { cmd: "call", offsetMs: sandbox.offsetMs() });
        expect(answers).toEqual(workers.map(() => USER));
        expect(refreshesSince(sandbox, seq)).toEqual(["ok"]);
      }
      expect(sandbox.sandbox.ledger.list().reuses).toEqual([]);
    } finally {
      await stopAll(workers);
    }
  });

  it("never take the lock from a holder that is paused (SIGSTOP) while it lives: they wait their bound, fail LOCK_TIMEOUT, send nothing", async () => {
    const workers = await fleet(3, { waitTimeoutMs: 1_500 });
    const [holder, ...others] = workers as [Worker, Worker, Worker];
    try {
      sandbox.expire();
      const seq = lastSeq(sandbox);
      holder.send({ cmd: "call", offsetMs: sandbox.offsetMs(), pause: "intent" });
      expect(await holder.next()).toEqual({ paused: "intent" });
      // Stopped with the lock taken and the stale record read: its transaction stays open.
      const answers = await together(others, { cmd: "call", offsetMs: sandbox.offsetMs() });
      expect(answers).toEqual(others.map(() => expect.objectContaining({ error: "LOCK_TIMEOUT" })));
      expect(String(answers[0]!["message"])).toMatch(/still held by the server process \d+/);
      expect(refreshesSince(sandbox, seq)).toEqual([]);
      holder.process.kill("SIGCONT");
      expect(await holder.next()).toEqual(USER);
      expect(refreshesSince(sandbox, seq)).toEqual(["ok"]);
      // The session was kept: the others use the holder's tokens.
      expect(await together(others, { cmd: "call", offsetMs: sandbox.offsetMs() })).toEqual(others.map(() => USER));
      expect(refreshesSince(sandbox, seq)).toEqual(["ok"]);
    } finally {
      await stopAll(workers);
    }
  });

  it("keep the session when the holder is paused after its request left: it resumes and stores, the others fail LOCK_TIMEOUT meanwhile", async () => {
    const workers = await fleet(2, { waitTimeoutMs: 1_500 });
    const [holder, other] = workers as [Worker, Worker];
    try {
      sandbox.expire();
      const seq = lastSeq(sandbox);
      holder.send({ cmd: "call", offsetMs: sandbox.offsetMs(), pause: "in-flight" });
      expect(await holder.next()).toEqual({ paused: "in-flight" });
      expect(refreshesSince(sandbox, seq)).toEqual(["ok"]); // rotated at the tenant, not yet stored
      other.send({ cmd: "call", offsetMs: sandbox.offsetMs() });
      expect(await other.next()).toMatchObject({ error: "LOCK_TIMEOUT" });
      holder.process.kill("SIGCONT");
      expect(await holder.next()).toEqual(USER);
      other.send({ cmd: "call", offsetMs: sandbox.offsetMs() });
      expect(await other.next()).toEqual(USER);
      expect(refreshesSince(sandbox, seq)).toEqual(["ok"]);
      expect(sandbox.sandbox.ledger.list().reuses).toEqual([]);
    } finally {
      await stopAll(workers);
    }
  });

  it("get a killed holder's lock at once: the server releases it when the holder's connection closes", async () => {
    const workers = await fleet(2, { waitTimeoutMs: 30_000 });
    const [holder, waiter] = workers as [Worker, Worker];
    try {
      sandbox.expire();
      const seq = lastSeq(sandbox);
      holder.send({ cmd: "call", offsetMs: sandbox.offsetMs(), hold: true });
      expect(await holder.next()).toEqual({ holding: true }); // lock taken, intent written, request held
      waiter.send({ cmd: "call", offsetMs: sandbox.offsetMs(), announceWait: true });
      expect(await waiter.next()).toEqual({ waiting: true });
      const killed = performance.now();
      holder.process.kill("SIGKILL");
      expect(await waiter.next()).toEqual(USER);
      // Not a lease that ran out: the wait ended with the kill, far inside the 30 s bound.
      expect(performance.now() - killed).toBeLessThan(15_000);
      // The killed holder never sent its request; its intent named a process of this host that has exited.
      expect(refreshesSince(sandbox, seq)).toEqual(["ok"]);
    } finally {
      await stopAll(workers);
    }
  });

  it("keep the session when the holder's connection is dropped mid-refresh (pg_terminate_backend): the next holder waits for its intent", async () => {
    const workers = await fleet(2, { waitTimeoutMs: 10_000 });
    const [holder, other] = workers as [Worker, Worker];
    try {
      sandbox.expire();
      const seq = lastSeq(sandbox);
      holder.send({ cmd: "call", offsetMs: sandbox.offsetMs(), pause: "in-flight", manager: { intentWaitMs: 20_000 } });
      expect(await holder.next()).toEqual({ paused: "in-flight" });
      const backend = await lockHolderBackend();
      await admin.query("SELECT pg_terminate_backend($1)", [backend]);
      // The lock is free now; the other takes it, finds the holder's intent on the token it would
      // present, and waits outside the lock instead of presenting it.
      other.send({ cmd: "call", offsetMs: sandbox.offsetMs(), manager: { intentWaitMs: 20_000 } });
      await new Promise((r) => setTimeout(r, 1_000));
      expect(refreshesSince(sandbox, seq)).toEqual(["ok"]);
      holder.process.kill("SIGCONT");
      expect(await holder.next()).toEqual(USER);
      expect(await other.next()).toEqual(USER);
      expect(refreshesSince(sandbox, seq)).toEqual(["ok"]);
      expect(sandbox.sandbox.ledger.list().reuses).toEqual([]);
    } finally {
      await stopAll(workers);
    }
  });

  it("keep the session across a PostgreSQL restart mid-refresh: the intent outlives the lock, the holder writes its tokens once the server is back", async () => {
    const workers = await fleet(2, { waitTimeoutMs: 10_000 });
    const [holder, other] = workers as [Worker, Worker];
    try {
      sandbox.expire();
      const seq = lastSeq(sandbox);
      holder.send({ cmd: "call", offsetMs: sandbox.offsetMs(), pause: "in-flight", manager: { intentWaitMs: 20_000 } });
      expect(await holder.next()).toEqual({ paused: "in-flight" });
      await server.restart(); // SIGKILL and start: the lock is gone, the committed intent is not
      other.send({ cmd: "call", offsetMs: sandbox.offsetMs(), manager: { intentWaitMs: 20_000 } });
      await new Promise((r) => setTimeout(r, 1_000));
      expect(refreshesSince(sandbox, seq)).toEqual(["ok"]);
      holder.process.kill("SIGCONT");
      expect(await holder.next()).toEqual(USER);
      expect(await other.next()).toEqual(USER);
      expect(refreshesSince(sandbox, seq)).toEqual(["ok"]);
      expect(sandbox.sandbox.ledger.list().reuses).toEqual([]);
    } finally {
      await stopAll(workers);
    }
  });
});
