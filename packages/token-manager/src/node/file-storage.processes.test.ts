/**
 * fileStorage across real processes, against the real sandbox (a server process with strict refresh
 * token rotation: a rotated-away refresh token presented again revokes the family, RFC 9700 §4.14.2).
 * Every worker is a separate Node process running the BUILT package as a command-line tool would,
 * with `fileStorage(file)` and nothing added.
 *
 * N processes released together after expiry (issue 11's regression) are a conformance scenario now
 * (spec/conformance/scenarios/fleet-after-expiry.yaml, every target alone and mixed); what stays here
 * is the file lock's own behaviour: lock avoidance, stale takeover, killed writers, keys kept.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, utimes } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startSandboxProcess,
  startWorker,
  stopAll,
  together,
  type Child,
  type SandboxProcess,
} from "../test-support/processes.js";
import { createTokenManager } from "../token-manager.js";
import { fileStorage } from "./file-storage.js";

const CLIENT_ID = "multi-process-cli";
const REDIRECT_URI = "http://127.0.0.1:53682/callback";
const TOKENS_KEY_PREFIX = "tenant-integration:";

let sandbox: SandboxProcess;
let dir: string;

beforeAll(async () => {
  sandbox = await startSandboxProcess(CLIENT_ID, REDIRECT_URI);
  dir = await mkdtemp(join(tmpdir(), "file-storage-processes-"));
});

afterAll(async () => {
  await sandbox?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The token file parsed, with its one stored record. */
async function storedRecord(file: string): Promise<{ refresh_token: string }> {
  const data = JSON.parse(await readFile(file, "utf8")) as Record<string, string>;
  const key = Object.keys(data).find((k) => k.startsWith(TOKENS_KEY_PREFIX) && k.endsWith(":tokens"));
  return JSON.parse(data[key!]!) as { refresh_token: string };
}

/** What is in the directory besides the token file: temporary files, lock directories. */
async function leftovers(file: string): Promise<string[]> {
  const name = file.slice(dir.length + 1);
  return (await readdir(dir)).filter((n) => n.startsWith(name + ".") && !n.includes(".corrupt-"));
}

describe("20 processes sharing one token file, when another process has stored fresh tokens", () => {
  const USER = { status: 200, user: "Ada Lovelace" };
  let workers: Child[] = [];
  let file: string;

  beforeAll(async () => {
    file = join(dir, "tokens-read-first.json");
    workers = await Promise.all(
      Array.from({ length: 20 }, () => startWorker(sandbox.url, file, CLIENT_ID, REDIRECT_URI)),
    );
    workers[0]!.send({ cmd: "sign-in", offsetMs: sandbox.offsetMs });
    expect(await workers[0]!.next()).toEqual({ signedIn: true });
  }, 60_000);

  afterAll(() => stopAll(workers));

  it("after expiry make exactly one refresh, and then use the stored tokens without taking the lock", async () => {
    await sandbox.expire();
    let seq = await sandbox.lastSeq();
    const afterExpiry = await together(workers, { cmd: "call", offsetMs: sandbox.offsetMs, count: true });
    expect(afterExpiry.map(({ lockTaken: _, ...answer }) => answer)).toEqual(workers.map(() => USER));
    expect(await sandbox.refreshesSince(seq)).toEqual(["ok"]);
    // The refresher took the lock; the others may have found the tokens stale at first, and the lock
    // free once the refresh was stored: at least one took it, none more than once.
    expect(afterExpiry.map((a) => a.lockTaken).filter((n) => n !== 0 && n !== 1)).toEqual([]);
    expect(afterExpiry.some((a) => a.lockTaken === 1)).toBe(true);

    // Each call is a new manager (a new run of the tool): the file holds fresh tokens, read first.
    seq = await sandbox.lastSeq();
    expect(await together(workers, { cmd: "call", offsetMs: sandbox.offsetMs, count: true })).toEqual(
      workers.map(() => ({ ...USER, lockTaken: 0 })),
    );
    expect(await sandbox.refreshesSince(seq)).toEqual([]);
  }, 60_000);

  it("stop waiting for the lock once another process stores fresh tokens, without taking it", async () => {
    // This test process holds the refresh lock while every worker finds the tokens expired and waits.
    const storage = fileStorage(file);
    let taken!: () => void;
    let release!: () => void;
    const inLock = new Promise<void>((r) => (taken = r));
    const released = new Promise<void>((r) => (release = r));
    const holding = storage.lock("hold", async () => {
      taken();
      await released;
    });
    await inLock;
    try {
      await sandbox.expire();
      const seq = await sandbox.lastSeq();
      const waiting = workers.map((w) => w.next());
      for (const w of workers) w.send({ cmd: "call", offsetMs: sandbox.offsetMs, count: true, announceWait: true });
      expect(await Promise.all(waiting)).toEqual(workers.map(() => ({ waiting: true })));
      const answers = workers.map((w) => w.next());

      // Still under the held lock, a manager of this process (with a lock of its own) refreshes and stores.
      const clock = sandbox.offsetMs;
      const refresher = createTokenManager({
        baseUrl: sandbox.url,
        clientId: CLIENT_ID,
        redirectUri: REDIRECT_URI,
        scopes: ["profile:read"],
        storage,
        lock: (_name, task) => task(),
        now: () => Date.now() + clock,
      });
      await refresher.getAccessToken();

      expect(await Promise.all(answers)).toEqual(workers.map(() => ({ ...USER, lockTaken: 0 })));
      expect(await sandbox.refreshesSince(seq)).toEqual(["ok"]);
    } finally {
      release();
      await holding;
    }
  }, 60_000);
});

describe("a lock holder killed with SIGKILL during a refresh", () => {
  it("is taken over at once (its pid is gone: no wait for staleMs); the others refresh once, and leave a valid file and no temporary file", async () => {
    const file = join(dir, "tokens-killed.json");
    // A stale bound far beyond the lock timeout: a takeover that waited for it would fail with LOCK_TIMEOUT.
    const options = { staleMs: 120_000, lockTimeoutMs: 15_000 };
    const holder = await startWorker(sandbox.url, file, CLIENT_ID, REDIRECT_URI, options);
    const others = await Promise.all(
      Array.from({ length: 4 }, () => startWorker(sandbox.url, file, CLIENT_ID, REDIRECT_URI, options)),
    );
    try {
      holder.send({ cmd: "sign-in", offsetMs: sandbox.offsetMs });
      expect(await holder.next()).toEqual({ signedIn: true });
      const before = (await storedRecord(file)).refresh_token;
      await sandbox.expire();
      const seq = await sandbox.lastSeq();

      // The holder takes the refresh lock and is killed just before its refresh request leaves.
      holder.send({ cmd: "call", offsetMs: sandbox.offsetMs, hold: true });
      expect(await holder.next()).toEqual({ holding: true });
      const answers = together(others, { cmd: "call", offsetMs: sandbox.offsetMs });
      holder.process.kill("SIGKILL");
      await holder.exited;

      expect(await answers).toEqual(Array.from({ length: 4 }, () => ({ status: 200, user: "Ada Lovelace" })));
      expect(await sandbox.refreshesSince(seq)).toEqual(["ok"]);
      expect((await storedRecord(file)).refresh_token).not.toBe(before);
      expect(await leftovers(file)).toEqual([]);
    } finally {
      await stopAll([holder, ...others]);
    }
  }, 60_000);
});

describe("processes finding a stale lock at the same moment", () => {
  it("take it over one at a time: no two ever hold it together (the takeover's own gate)", async () => {
    const file = join(dir, "tokens-takeover.json");
    const log = join(dir, "takeover.log");
    const workers = await Promise.all(
      Array.from({ length: 8 }, () => startWorker(sandbox.url, file, CLIENT_ID, REDIRECT_URI, { staleMs: 2_000 })),
    );
    try {
      // The lock of a holder that died long ago.
      await mkdir(`${file}.refresh.lock`);
      const old = new Date(Date.now() - 60_000);
      await utimes(`${file}.refresh.lock`, old, old);
      expect(await together(workers, { cmd: "hold-lock", log, ms: 30 })).toEqual(workers.map(() => ({ held: true })));
      const lines = (await readFile(log, "utf8")).trim().split("\n");
      expect(lines).toHaveLength(16);
      for (let i = 0; i < lines.length; i += 2) {
        expect(lines[i]).toMatch(/^in \d+$/);
        expect(lines[i + 1]).toBe(lines[i]!.replace("in", "out"));
      }
    } finally {
      await stopAll(workers);
    }
  }, 60_000);
});

describe("a live holder that keeps the lock longer than staleMs", () => {
  it("is not declared stale: its lock stays fresh, and the waiter gets it only after the release", async () => {
    const file = join(dir, "tokens-long.json");
    const log = join(dir, "long.log");
    const options = { staleMs: 2_000 };
    const holder = await startWorker(sandbox.url, file, CLIENT_ID, REDIRECT_URI, options);
    const waiter = await startWorker(sandbox.url, file, CLIENT_ID, REDIRECT_URI, options);
    try {
      const held = holder.next();
      holder.send({ cmd: "hold-lock", log, ms: 5_000 });
      // Wait until the holder is inside, then ask for the lock: the waiter must wait 5 s, past staleMs.
      while (!(await readFile(log, "utf8").catch(() => "")).includes("in")) await new Promise((r) => setTimeout(r, 20));
      const waited = waiter.next();
      waiter.send({ cmd: "hold-lock", log, ms: 10 });
      expect(await Promise.all([held, waited])).toEqual([{ held: true }, { held: true }]);
      const [holderPid, waiterPid] = [holder.process.pid, waiter.process.pid];
      expect((await readFile(log, "utf8")).trim().split("\n")).toEqual([
        `in ${holderPid}`,
        `out ${holderPid}`,
        `in ${waiterPid}`,
        `out ${waiterPid}`,
      ]);
    } finally {
      await stopAll([holder, waiter]);
    }
  }, 60_000);
});

describe("writers killed with SIGKILL in the middle of their writes", () => {
  it("leave no temporary file behind the next writer, and the file stays valid JSON with every other key", async () => {
    const file = join(dir, "tokens-writers.json");
    const options = { staleMs: 2_000 };
    const keeper = await startWorker(sandbox.url, file, CLIENT_ID, REDIRECT_URI, options);
    try {
      keeper.send({ cmd: "write", key: "kept", value: "yes" });
      expect(await keeper.next()).toEqual({ written: "kept" });
      for (let kill = 0; kill < 5; kill++) {
        const writer = await startWorker(sandbox.url, file, CLIENT_ID, REDIRECT_URI, options);
        writer.send({ cmd: "write-loop", size: 200_000 });
        expect(await writer.next()).toEqual({ looping: true });
        await new Promise((r) => setTimeout(r, 50 + Math.random() * 150));
        await stopAll([writer]);
      }
      keeper.send({ cmd: "write", key: "after", value: "kills" });
      expect(await keeper.next()).toEqual({ written: "after" });
      const data = JSON.parse(await readFile(file, "utf8")) as Record<string, string>;
      expect(data).toMatchObject({ kept: "yes", after: "kills" });
      expect(await leftovers(file)).toEqual([]);
    } finally {
      await stopAll([keeper]);
    }
  }, 60_000);
});

describe("processes writing different keys at once", () => {
  it("keep every key (K = 12, read-modify-write under the write lock)", async () => {
    const file = join(dir, "tokens-keys.json");
    const writers = await Promise.all(
      Array.from({ length: 12 }, () => startWorker(sandbox.url, file, CLIENT_ID, REDIRECT_URI)),
    );
    try {
      const answers = await Promise.all(
        writers.map((w, i) => {
          const answer = w.next();
          w.send({ cmd: "write", key: `key-${i}`, value: `value-${i}` });
          return answer;
        }),
      );
      expect(answers).toEqual(writers.map((_, i) => ({ written: `key-${i}` })));
      const data = JSON.parse(await readFile(file, "utf8")) as Record<string, string>;
      expect(data).toEqual(Object.fromEntries(writers.map((_, i) => [`key-${i}`, `value-${i}`])));
    } finally {
      await stopAll(writers);
    }
  }, 60_000);
});
