/**
 * fileStorage under faults that last (issue 27): a read-only directory and a full disk, on real
 * tmpfs mounts (packages/token-manager/src/test-support/disks.ts; needs root, as CI runs).
 */
import { mkdtemp, readdir, readFile, rm, unlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTokenManager } from "../token-manager.js";
import type { TokenManager } from "../types.js";
import { failure } from "../test-support/failure.js";
import { testDisk, type TestDisk } from "../test-support/disks.js";
import { BASE, CLIENT_ID, REDIRECT_URI, clock, recordingFetch, signIn, tokenServer } from "../test-support/harness.js";
import { fileStorage } from "./file-storage.js";

const TOKENS_KEY = `tenant-integration:${BASE}:${CLIENT_ID}:tokens`;
/** How long tokens whose write failed are served before the write is tried again. */
const RETRY_PAUSE_MS = 1000;
/** A token's lifetime on the fake server (expires_in 900). */
const LIFETIME_MS = 900_000;

let dir: string;
let disks: TestDisk[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "token-manager-faults-"));
});
afterEach(async () => {
  for (const disk of disks) disk.remove();
  disks = [];
  await rm(dir, { recursive: true, force: true });
});

async function disk(): Promise<TestDisk> {
  const made = await testDisk(join(dir, "disk"));
  disks.push(made);
  return made;
}

/**
 * A manager of the token file `path` on the fake tenant. `onRefresh` runs when a refresh request
 * reaches the tenant, before it answers: a fault that starts while the request is in flight, after
 * the refresh intent was written (a fault before it stops the refresh: no intent, no send, D6).
 */
function manager(path: string, onRefresh?: () => unknown) {
  const server = tokenServer();
  let armed = onRefresh;
  const { fetch, calls } = recordingFetch(async (c) => {
    if (armed && c.body.includes('"refresh_token"')) {
      const run = armed;
      armed = undefined;
      await run();
    }
    return server.handler(c);
  });
  const c = clock();
  const tm = createTokenManager({
    baseUrl: BASE,
    clientId: CLIENT_ID,
    redirectUri: REDIRECT_URI,
    scopes: ["profile:read"],
    fetch,
    now: c.now,
    storage: fileStorage(path),
  });
  return { tm, calls, clock: c };
}

async function storedTokens(path: string): Promise<{ access_token: string; refresh_token: string }> {
  const data = JSON.parse(await readFile(path, "utf8")) as Record<string, string>;
  return JSON.parse(data[TOKENS_KEY]!) as { access_token: string; refresh_token: string };
}

/** What `getAccessToken()` gives within `ms` (wall time): its token, its error, or "still running". */
async function settleWithin(tm: TokenManager, ms: number): Promise<{ token?: string; error?: Error; running?: true }> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<{ running: true }>((resolve) => (timer = setTimeout(() => resolve({ running: true }), ms)));
  try {
    return await Promise.race([
      tm.getAccessToken().then(
        (token) => ({ token }),
        (error: Error) => ({ error }),
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

const faults = [
  {
    fault: "a read-only directory",
    errno: "EROFS",
    start: (d: TestDisk) => d.readOnly(),
    end: async (d: TestDisk) => d.writable(),
  },
  {
    fault: "a full disk",
    errno: "ENOSPC",
    start: (d: TestDisk) => d.fill(),
    end: async (d: TestDisk) => {
      for (const name of (await readdir(d.dir)).filter((n) => n.startsWith("filler-"))) await unlink(join(d.dir, name));
    },
  },
] as const;

describe.each(faults)("$fault that lasts past the next expiry (issue 27)", ({ errno, start, end }) => {
  it("a refresh ends at once with STORAGE_FAILED when its intent cannot be written (no intent, no send, D6): nothing reaches the tenant, the lock is released, the stored tokens are untouched, and the next call once the disk is back refreshes", async () => {
    const d = await disk();
    const path = join(d.dir, "tokens.json");
    const { tm, calls, clock: c } = manager(path);
    await signIn(tm);
    await start(d);
    c.advance(LIFETIME_MS);
    for (let call = 0; call < 2; call++) {
      const outcome = await settleWithin(tm, 5_000);
      expect(outcome.error).toEqual(failure("STORAGE_FAILED"));
      expect(outcome.error!.message).toBe(
        `STORAGE_FAILED: the refresh intent could not be written (cannot write the token file ${path} (${errno})), so the refresh was not sent; the stored tokens are unchanged and the next call tries again`,
      );
      expect((outcome.error!.cause as Error).message).toBe(`cannot write the token file ${path} (${errno})`);
    }
    // Only the sign-in's exchange reached the tenant.
    expect(calls).toHaveLength(1);
    expect((await readdir(d.dir)).filter((n) => n.includes(".lock"))).toEqual([]);
    await expect(fileStorage(path, { lockTimeoutMs: 500 }).lock("refresh", async () => "taken")).resolves.toBe("taken");
    expect(await storedTokens(path)).toMatchObject({ access_token: "at_1", refresh_token: "rt_1" });
    await end(d);
    expect(await tm.getAccessToken()).toBe("at_2");
    expect(await storedTokens(path)).toMatchObject({ access_token: "at_2", refresh_token: "rt_2" });
    expect(JSON.parse(calls[1]!.body)).toMatchObject({ grant_type: "refresh_token", refresh_token: "rt_1" });
  }, 20_000);
});

// A disk that fills while the refresh is in flight (its intent written): the lock directories made
// before still come and go (a read-only remount would also stop their release, which the lock
// documents on its own: dir-lock.test.ts).
describe("a full disk that begins while the refresh is in flight (issue 27)", () => {
  const { errno, start, end } = faults[1];
  it("once a refresh whose fault began in flight is unwritten, the next refresh ends at once with STORAGE_FAILED naming the file and the fault, sends nothing, releases the lock, and the session goes on once the disk is back", async () => {
    const d = await disk();
    const path = join(d.dir, "tokens.json");
    const { tm, calls, clock: c } = manager(path, () => start(d));
    await signIn(tm);
    const reported: Error[] = [];
    tm.on("storage-failed", ({ error }) => reported.push(error));

    // The first refresh, the fault beginning while it is in flight: its tokens are handed out
    // (documented), not written.
    c.advance(LIFETIME_MS);
    expect(await tm.getAccessToken()).toBe("at_2");
    expect(reported).toHaveLength(1);

    // The next one needed while the fault lasts: the tokens to refresh from (rt_2) are not stored.
    // It used to loop ("The stored tokens changed before the refresh left") without end.
    c.advance(LIFETIME_MS);
    const started = performance.now();
    const outcome = await settleWithin(tm, 5_000);
    expect(outcome.running).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(outcome.error).toEqual(failure("STORAGE_FAILED"));
    expect(outcome.error!.message).toBe(
      "STORAGE_FAILED: the refreshed tokens cannot be written, so they are not refreshed again until they are",
    );
    expect((outcome.error!.cause as Error).message).toBe(`cannot write the token file ${path} (${errno})`);
    // Nothing sent with rt_2: the tenant's current refresh token is the one kept in memory.
    expect(calls).toHaveLength(2);
    // The lock is released: no lock directory left, and another storage of the file takes it at once.
    expect((await readdir(d.dir)).filter((n) => n.includes(".lock"))).toEqual([]);
    await expect(fileStorage(path, { lockTimeoutMs: 500 }).lock("refresh", async () => "taken")).resolves.toBe("taken");
    // Every call while the fault lasts says so again, at once.
    await expect(tm.getAccessToken()).rejects.toThrow(failure("STORAGE_FAILED"));
    expect(calls).toHaveLength(2);

    // The disk is back: the kept tokens (rt_2) are written, then refreshed from.
    await end(d);
    expect(await tm.getAccessToken()).toBe("at_3");
    expect(await storedTokens(path)).toMatchObject({ access_token: "at_3", refresh_token: "rt_3" });
    expect(calls).toHaveLength(3);
    expect(JSON.parse(calls[2]!.body)).toMatchObject({ grant_type: "refresh_token", refresh_token: "rt_2" });
  }, 20_000);

  it("the rotated tokens of a refresh whose fault began in flight are served from memory until their expiry, and written on the first call after the disk is back", async () => {
    const d = await disk();
    const path = join(d.dir, "tokens.json");
    const { tm, calls, clock: c } = manager(path, () => start(d));
    await signIn(tm);
    c.advance(LIFETIME_MS);
    expect(await tm.getAccessToken()).toBe("at_2");
    c.advance(RETRY_PAUSE_MS);
    expect(await tm.getAccessToken()).toBe("at_2");
    await end(d);
    c.advance(RETRY_PAUSE_MS);
    expect(await tm.getAccessToken()).toBe("at_2");
    expect(await storedTokens(path)).toMatchObject({ access_token: "at_2", refresh_token: "rt_2" });
    expect(calls).toHaveLength(2);
  });
});

describe("a token file deleted while the processes are idle", () => {
  it("is a sign-out: the tokens in memory are served until they expire, then every manager says NOT_SIGNED_IN and sends nothing", async () => {
    const path = join(dir, "tokens.json");
    const first = manager(path);
    await signIn(first.tm);
    const second = manager(path);
    second.clock.advance(0);
    expect(await second.tm.getAccessToken()).toBe("at_1");
    await unlink(path);
    expect(await first.tm.getAccessToken()).toBe("at_1");
    for (const { tm, calls, clock: c } of [first, second]) {
      c.advance(LIFETIME_MS);
      await expect(tm.getAccessToken()).rejects.toThrow(failure("NOT_SIGNED_IN"));
      expect(await tm.isSignedIn()).toBe(false);
      expect(calls.filter((call) => call.body.includes("refresh_token"))).toEqual([]);
    }
  });
});
