import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rename,
  rm,
  stat,
  symlink,
  utimes,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TokenManagerError } from "../errors.js";
import { logSessionTo } from "../logger.js";
import { createTokenManager } from "../token-manager.js";
import type { TokenManagerOptions } from "../types.js";
import { failure } from "../test-support/failure.js";
import { testDisk, type TestDisk } from "../test-support/disks.js";
import { BASE, CLIENT_ID, REDIRECT_URI, clock, recordingFetch, tokenServer, signIn } from "../test-support/harness.js";
import { memoryStorage } from "../storage/memory.js";
import { fileStorage } from "./file-storage.js";
import { FileStorageError } from "./file-storage-error.js";

const TOKENS_KEY = `tenant-integration:${BASE}:${CLIENT_ID}:tokens`;

let dir: string;
let disks: TestDisk[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "token-manager-"));
});
afterEach(async () => {
  for (const disk of disks) disk.remove();
  disks = [];
  await rm(dir, { recursive: true, force: true });
});

/** A manager on the fake token server, with its own clock. */
/**
 * A manager on the fake tenant. `onRefresh` runs when a refresh request reaches the tenant, before it
 * answers: a fault that starts while the request is in flight, after the intent was written.
 */
function manager(overrides: Partial<TokenManagerOptions>, onRefresh?: () => void | Promise<void>) {
  const server = tokenServer();
  const { fetch, calls } = recordingFetch(async (c) => {
    if (onRefresh && c.body.includes('"refresh_token"')) await onRefresh();
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
    ...overrides,
  });
  return { tm, calls, clock: c };
}

/** How long tokens whose write failed are served before the write is tried again. */
const RETRY_PAUSE_MS = 1000;

async function storedTokens(path: string): Promise<{ access_token: string; refresh_token: string }> {
  const data = JSON.parse(await readFile(path, "utf8")) as Record<string, string>;
  return JSON.parse(data[TOKENS_KEY]!) as { access_token: string; refresh_token: string };
}

async function disk(): Promise<TestDisk> {
  const made = await testDisk(join(dir, "disk"));
  disks.push(made);
  return made;
}

describe("fileStorage", () => {
  it("treats an absent file as empty storage", async () => {
    expect(await fileStorage(join(dir, "none.json")).get("k")).toBeUndefined();
  });

  it("reads back what it wrote, across instances, and forgets deleted keys", async () => {
    const path = join(dir, "nested", "tokens.json");
    await fileStorage(path).set("a", "1");
    await fileStorage(path).set("b", "2");
    const again = fileStorage(path);
    expect([await again.get("a"), await again.get("b")]).toEqual(["1", "2"]);
    await again.delete("a");
    expect(await fileStorage(path).get("a")).toBeUndefined();
    expect(await fileStorage(path).get("b")).toBe("2");
  });

  it("writes the file with mode 0600 in a directory of mode 0700", async () => {
    const path = join(dir, "cfg", "tokens.json");
    await fileStorage(path).set("k", "v");
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, "cfg"))).mode & 0o777).toBe(0o700);
  });

  it("keeps every one of 25 concurrent writes of one process and leaves neither temporary file nor lock behind", async () => {
    const path = join(dir, "tokens.json");
    const s = fileStorage(path);
    await Promise.all(Array.from({ length: 25 }, (_, i) => s.set(`k${i}`, `v${i}`)));
    expect(await readdir(dir)).toEqual(["tokens.json"]);
    const data = JSON.parse(await readFile(path, "utf8")) as Record<string, string>;
    expect(Object.keys(data)).toHaveLength(25);
  });

  it("removes the temporary files that killed writers left, on the next write", async () => {
    const path = join(dir, "tokens.json");
    await writeFile(`${path}.0123456789ab.tmp`, '{"k":"a refresh token of a killed writer"}');
    await writeFile(join(dir, "other.json.0123456789ab.tmp"), "not ours");
    await fileStorage(path).set("k", "v");
    expect((await readdir(dir)).sort()).toEqual(["other.json.0123456789ab.tmp", "tokens.json"]);
  });

  it("carries its own lock, which createTokenManager uses, serializing tasks across storages of one file", async () => {
    const path = join(dir, "tokens.json");
    const order: string[] = [];
    const task = (name: string) => async () => {
      order.push(`${name} in`);
      await new Promise((r) => setTimeout(r, 30));
      order.push(`${name} out`);
      return name;
    };
    const results = await Promise.all([fileStorage(path).lock("x", task("a")), fileStorage(path).lock("x", task("b"))]);
    expect(results).toEqual(["a", "b"]);
    // Either may go first; what counts is that they never overlap.
    const [first, second] = order[0] === "a in" ? ["a", "b"] : ["b", "a"];
    expect(order).toEqual([`${first} in`, `${first} out`, `${second} in`, `${second} out`]);
    expect(await readdir(dir)).toEqual([]);
  });

  it("keeps a lock held through a task longer than its update interval: writing the owner file does not look like a takeover", async () => {
    const path = join(dir, "tokens.json");
    // staleMs 2 s: proper-lockfile updates the mtime every second and compares it with the one it set.
    const held = await fileStorage(path, { staleMs: 2_000 }).lock("x", async (lock) => {
      await new Promise((r) => setTimeout(r, 2_600));
      return lock?.isHeld();
    });
    expect(held).toBe(true);
    expect(await readdir(dir)).toEqual([]);
  });

  it("fails with LOCK_TIMEOUT, naming the lock, when another process keeps its lock fresh past the bounded wait", async () => {
    const path = join(dir, "tokens.json");
    // What another live process holding the lock looks like: the lock directory, with a fresh mtime.
    await mkdir(`${path}.refresh.lock`);
    const error = (await fileStorage(path, { lockTimeoutMs: 300 })
      .lock("x", async () => "never")
      .catch((e: unknown) => e)) as FileStorageError;
    expect(error).toBeInstanceOf(FileStorageError);
    expect(error).toMatchObject({
      code: "LOCK_TIMEOUT",
      path: `${path}.refresh.lock`,
      // No owner file (a writer that keeps none, or one killed before writing it): "another process".
      message: `the lock ${path}.refresh.lock stayed held for 300 ms by another process`,
    });
  });

  it("takes over a lock whose holder stopped updating it for staleMs", async () => {
    const path = join(dir, "tokens.json");
    await mkdir(`${path}.refresh.lock`);
    const old = new Date(Date.now() - 5_000);
    await utimes(`${path}.refresh.lock`, old, old);
    expect(await fileStorage(path, { staleMs: 2_000, lockTimeoutMs: 1_000 }).lock("x", async () => "taken over")).toBe(
      "taken over",
    );
    expect(await readdir(dir)).toEqual([]);
  });
});

describe("a wait for the lock with `until` (what the token manager passes)", () => {
  /** Replaces the token file as a writer does (temporary file, rename), holding `text`. */
  const replace = async (path: string, text: string) => {
    await writeFile(`${path}.tmp`, text);
    await rename(`${path}.tmp`, path);
  };
  const holds = (path: string, text: string) => async () =>
    (await readFile(path, "utf8").catch(() => "")).includes(text);

  it("ends without the lock, and without running the task, once the file holds what it waits for", async () => {
    const path = join(dir, "tokens.json");
    await mkdir(`${path}.refresh.lock`); // held by another process
    let ran = false;
    const waiting = fileStorage(path, { lockTimeoutMs: 10_000 })
      .lock("x", async () => void (ran = true), { until: holds(path, "fresh") })
      .then(
        () => "took the lock",
        (e: unknown) => (e as Error).name,
      );
    await new Promise((r) => setTimeout(r, 100));
    await replace(path, '{"tokens":"fresh"}');
    // Not LOCK_TIMEOUT: the wait ended because of the file, long before its 10 s bound.
    expect(await waiting).toBe("LockWaitEnded");
    expect(ran).toBe(false);
  });

  it("takes the lock once it is released, and times out while it is held, even when the file keeps changing without it", async () => {
    const path = join(dir, "tokens.json");
    const lockDir = `${path}.refresh.lock`;
    await mkdir(lockDir);
    // Another process writing something else than what the waiter waits for, every 5 ms.
    let writing = true;
    const writer = (async () => {
      for (let n = 0; writing; n++) {
        await replace(path, `{"intent":"${n}"}`);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    try {
      const timedOut = await fileStorage(path, { lockTimeoutMs: 400 })
        .lock("x", async () => "taken", { until: holds(path, "fresh") })
        .catch((e: unknown) => e);
      expect(timedOut).toMatchObject({ code: "LOCK_TIMEOUT" });
      const taking = fileStorage(path, { lockTimeoutMs: 10_000 }).lock("x", async () => "taken", {
        until: holds(path, "fresh"),
      });
      await new Promise((r) => setTimeout(r, 100));
      await rm(lockDir, { recursive: true });
      expect(await taking).toBe("taken");
    } finally {
      writing = false;
      await writer;
    }
  });
});

describe("fileStorage and the token manager", () => {
  it("keeps a command-line session across manager instances", async () => {
    const path = join(dir, "tokens.json");
    const server = tokenServer();
    const { fetch } = recordingFetch((c) => server.handler(c));
    const options = {
      baseUrl: BASE,
      clientId: CLIENT_ID,
      redirectUri: REDIRECT_URI,
      scopes: ["profile:read" as const],
      fetch,
    };
    await signIn(createTokenManager({ ...options, storage: fileStorage(path) }));
    expect(await createTokenManager({ ...options, storage: fileStorage(path) }).getAccessToken()).toBe("at_1");
  });
});

describe("a token file whose intent entry is not an intent record (DECISIONS D2)", () => {
  it("reads as no intent: the refresh goes on, a warning names the entry once, and the next intent replaces it", async () => {
    const path = join(dir, "tokens.json");
    const warnings: string[] = [];
    const logger = logSessionTo({ warn: (_fields: unknown, message: string) => void warnings.push(message) }, "warn");
    const { tm, calls, clock: c } = manager({ storage: fileStorage(path), logger });
    await signIn(tm);
    const intentKey = `tenant-integration:${BASE}:${CLIENT_ID}:intent`;
    const withForeignIntent = async () => {
      const data = JSON.parse(await readFile(path, "utf8")) as Record<string, string>;
      await writeFile(path, JSON.stringify({ ...data, [intentKey]: "written by another tool" }), { mode: 0o600 });
    };
    for (const _ of [1, 2]) {
      await withForeignIntent();
      c.advance(16 * 60_000);
      await tm.getAccessToken();
      // this refresh's intent replaced it, and was removed once its tokens were stored
      expect(Object.keys(JSON.parse(await readFile(path, "utf8")) as object)).not.toContain(intentKey);
    }
    expect(calls.filter((call) => call.body.includes("refresh_token")).length).toBe(2);
    expect(warnings).toEqual([
      `The value under ${intentKey} is not a refresh intent record (this kit did not write it); it reads as no intent, and the next refresh intent replaces it`,
    ]);
  });
});

describe("a corrupt or empty token file", () => {
  for (const [what, content, said] of [
    ["corrupt", "{not json", "not valid JSON"],
    ["empty", "", "empty"],
    ["not an object of strings", '{"k": 1}', "not a JSON object of strings"],
  ] as const) {
    it(`(${what}) is moved aside and kept, getAccessToken says NOT_SIGNED_IN with the cause naming both files, and sign-in writes a good file`, async () => {
      const path = join(dir, "tokens.json");
      await writeFile(path, content, { mode: 0o600 });
      const { tm } = manager({ storage: fileStorage(path) });
      const error = (await tm.getAccessToken().catch((e: unknown) => e)) as Error;
      expect(error).toEqual(failure("NOT_SIGNED_IN"));
      expect(error.message).toBe("NOT_SIGNED_IN: the stored tokens were unreadable");
      const aside = (await readdir(dir)).filter((n) => n.startsWith("tokens.json.corrupt-"));
      expect(aside).toHaveLength(1);
      expect((error.cause as Error).name).toBe("FileStorageError");
      expect((error.cause as Error).message).toBe(
        `the token file ${path} was ${said}; moved aside to ${join(dir, aside[0]!)}: sign in again`,
      );
      expect(await readFile(join(dir, aside[0]!), "utf8")).toBe(content);

      // The next call finds no file: plainly not signed in. Signing in writes a good file.
      await expect(tm.getAccessToken()).rejects.toThrow(failure("NOT_SIGNED_IN"));
      await signIn(tm);
      expect(await storedTokens(path)).toMatchObject({ access_token: "at_1", refresh_token: "rt_1" });
      expect(await tm.getAccessToken()).toBe("at_1");
    });
  }

  it("is reported when isSignedIn() finds it, by storage-failed and a warning naming where it went (regression: issue 27, it was set aside silently)", async () => {
    const path = join(dir, "tokens.json");
    await writeFile(path, "{not json", { mode: 0o600 });
    const warnings: string[] = [];
    const { tm } = manager({
      storage: fileStorage(path),
      logger: logSessionTo({ warn: (_fields, message) => warnings.push(message) }, "warn"),
    });
    const failures: TokenManagerError[] = [];
    tm.on("storage-failed", ({ error }) => failures.push(error));

    expect(await tm.isSignedIn()).toBe(false);
    const aside = (await readdir(dir)).filter((n) => n.startsWith("tokens.json.corrupt-"));
    expect(aside).toHaveLength(1);
    const movedTo = join(dir, aside[0]!);
    expect(failures).toEqual([failure("STORAGE_FAILED")]);
    expect(failures[0]!.message).toContain(`moved aside to ${movedTo}`);
    expect(failures[0]!.cause).toMatchObject({ name: "FileStorageError", code: "FILE_CORRUPT" });
    expect(warnings).toEqual([
      expect.stringContaining(`the token file ${path} was not valid JSON; moved aside to ${movedTo}`),
    ]);

    // Reported once: the file is gone, so the next read is plainly no session.
    expect(await tm.isSignedIn()).toBe(false);
    expect(failures).toHaveLength(1);
  });

  it("is moved aside by a write too (a sign-in begun first), which then writes a good file", async () => {
    const path = join(dir, "tokens.json");
    await writeFile(path, "", { mode: 0o600 });
    const { tm } = manager({ storage: fileStorage(path) });
    await signIn(tm);
    expect(await storedTokens(path)).toMatchObject({ access_token: "at_1" });
    expect((await readdir(dir)).filter((n) => n.startsWith("tokens.json.corrupt-"))).toHaveLength(1);
  });

  it("reports FILE_CORRUPT with reset from the storage itself, and never quotes the content", async () => {
    const path = join(dir, "tokens.json");
    await writeFile(path, '{"k": "rt_SECRET_in_a_broken_file"', { mode: 0o600 });
    const error = (await fileStorage(path)
      .get("k")
      .catch((e: unknown) => e)) as FileStorageError;
    expect(error).toBeInstanceOf(FileStorageError);
    expect(error).toMatchObject({ name: "FileStorageError", code: "FILE_CORRUPT", path, reset: true });
    expect(error.movedTo).toMatch(/tokens\.json\.corrupt-/);
    expect(JSON.stringify({ ...error, message: error.message })).not.toContain("SECRET");
  });
});

describe("a symlinked token file", () => {
  it("is written through to its target; the link stays a link", async () => {
    await mkdir(join(dir, "real"));
    const target = join(dir, "real", "tokens.json");
    const link = join(dir, "tokens.json");
    await symlink(target, link);
    const { tm } = manager({ storage: fileStorage(link) });
    await signIn(tm);
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
    expect(await readlink(link)).toBe(target);
    expect(await storedTokens(target)).toMatchObject({ access_token: "at_1" });
    expect((await stat(target)).mode & 0o777).toBe(0o600);
    // The lock and temporary files live beside the target, where every process finds them.
    expect(await readdir(dir)).toEqual(["real", "tokens.json"]);
    expect(await readdir(join(dir, "real"))).toEqual(["tokens.json"]);
  });

  it("is refused when it leads to something that is not a regular file", async () => {
    await mkdir(join(dir, "a-directory"));
    await symlink(join(dir, "a-directory"), join(dir, "tokens.json"));
    await expect(fileStorage(join(dir, "tokens.json")).get("k")).rejects.toMatchObject({
      code: "FILE_UNSAFE",
      message: `the token file ${join(dir, "a-directory")} is not a regular file`,
    });
  });
});

describe("a token file with a looser mode", () => {
  it("is tightened to 0600 on first read", async () => {
    const path = join(dir, "tokens.json");
    await writeFile(path, '{"k":"v"}');
    await chmod(path, 0o644);
    expect(await fileStorage(path).get("k")).toBe("v");
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it("is refused, naming the file and its mode, when it cannot be tightened", async () => {
    const d = await disk();
    const path = join(d.dir, "tokens.json");
    await writeFile(path, '{"k":"v"}');
    await chmod(path, 0o644);
    d.readOnly();
    const error = (await fileStorage(path)
      .get("k")
      .catch((e: unknown) => e)) as FileStorageError;
    expect(error).toMatchObject({
      code: "FILE_UNSAFE",
      message: `the token file ${path} may be read by others (mode 0644) and cannot be tightened to 0600`,
    });
  });
});

describe("a read-only directory", () => {
  it("on sign-in: the error names the file and the cause, and the tokens stay usable and are written on the next call", async () => {
    const d = await disk();
    const path = join(d.dir, "tokens.json");
    // The pending sign-in in memory (as a one-shot `login` may keep it), so the exchange happens.
    const { tm, calls, clock: c } = manager({ storage: fileStorage(path), pendingStorage: memoryStorage() });
    d.readOnly();
    const error = (await signIn(tm).catch((e: unknown) => e)) as Error;
    expect(error).toEqual(failure("STORAGE_FAILED"));
    expect(error.message).toBe("STORAGE_FAILED");
    expect((error.cause as Error).message).toBe(`cannot write the token file ${path} (EROFS)`);
    expect(calls).toHaveLength(1);
    // Usable in this process, without a new request.
    expect(await tm.getAccessToken()).toBe("at_1");
    d.writable();
    c.advance(RETRY_PAUSE_MS);
    expect(await tm.getAccessToken()).toBe("at_1");
    expect(await storedTokens(path)).toMatchObject({ access_token: "at_1", refresh_token: "rt_1" });
    expect(calls).toHaveLength(1);
  });

  it("on refresh: no intent, no send (D6): STORAGE_FAILED says the intent could not be written and why, nothing reaches the tenant, the stored tokens are untouched, and the next call once writable refreshes", async () => {
    const d = await disk();
    const path = join(d.dir, "tokens.json");
    const { tm, calls, clock: c } = manager({ storage: fileStorage(path) });
    await signIn(tm);
    d.readOnly();
    c.advance(900_000);
    const error = (await tm.getAccessToken().catch((e: unknown) => e)) as Error;
    expect(error).toEqual(failure("STORAGE_FAILED"));
    expect(error.message).toBe(
      `STORAGE_FAILED: the refresh intent could not be written (cannot write the token file ${path} (EROFS)), so the refresh was not sent; the stored tokens are unchanged and the next call tries again`,
    );
    expect((error.cause as Error).message).toBe(`cannot write the token file ${path} (EROFS)`);
    expect(calls).toHaveLength(1);
    expect(await storedTokens(path)).toMatchObject({ access_token: "at_1", refresh_token: "rt_1" });
    // The lock is released: another storage of the file takes it at once.
    await expect(fileStorage(path, { lockTimeoutMs: 500 }).lock("refresh", async () => "taken")).resolves.toBe("taken");
    d.writable();
    expect(await tm.getAccessToken()).toBe("at_2");
    expect(await storedTokens(path)).toMatchObject({ access_token: "at_2", refresh_token: "rt_2" });
    expect(calls).toHaveLength(2);
    expect(JSON.parse(calls[1]!.body)).toMatchObject({ grant_type: "refresh_token", refresh_token: "rt_1" });
  });

  it("read-only while the refresh is in flight (after its intent was written): the session goes on, storage-failed names the file, and the rotated tokens are written once it is writable", async () => {
    const d = await disk();
    const path = join(d.dir, "tokens.json");
    const { tm, calls, clock: c } = manager({ storage: fileStorage(path) }, () => d.readOnly());
    await signIn(tm);
    const reported: Error[] = [];
    tm.on("storage-failed", ({ error }) => reported.push(error));
    c.advance(900_000);
    expect(await tm.getAccessToken()).toBe("at_2");
    expect(reported).toEqual([failure("STORAGE_FAILED")]);
    expect((reported[0]!.cause as Error).message).toBe(`cannot write the token file ${path} (EROFS)`);
    expect(await storedTokens(path)).toMatchObject({ refresh_token: "rt_1" });
    d.writable();
    c.advance(RETRY_PAUSE_MS);
    expect(await tm.getAccessToken()).toBe("at_2");
    expect(await storedTokens(path)).toMatchObject({ access_token: "at_2", refresh_token: "rt_2" });
    expect(calls).toHaveLength(2);
  });
});

describe("a full disk", () => {
  it("on refresh: no intent, no send (D6): STORAGE_FAILED names the file and ENOSPC, nothing reaches the tenant, no temporary file is left, and the refresh goes out once there is room", async () => {
    const d = await disk();
    const path = join(d.dir, "tokens.json");
    const { tm, calls, clock: c } = manager({ storage: fileStorage(path) });
    await signIn(tm);
    await d.fill();
    c.advance(900_000);
    const error = (await tm.getAccessToken().catch((e: unknown) => e)) as Error;
    expect(error).toEqual(failure("STORAGE_FAILED"));
    expect(error.message).toContain("the refresh intent could not be written");
    expect((error.cause as Error).message).toBe(`cannot write the token file ${path} (ENOSPC)`);
    expect(calls).toHaveLength(1);
    expect((await readdir(d.dir)).filter((n) => n.endsWith(".tmp"))).toEqual([]);
    expect(await storedTokens(path)).toMatchObject({ access_token: "at_1", refresh_token: "rt_1" });
    for (const name of (await readdir(d.dir)).filter((n) => n.startsWith("filler-"))) await rm(join(d.dir, name));
    expect(await tm.getAccessToken()).toBe("at_2");
    expect(await storedTokens(path)).toMatchObject({ access_token: "at_2", refresh_token: "rt_2" });
    expect(calls).toHaveLength(2);
  });

  it("full while the refresh is in flight (after its intent was written): the session goes on, storage-failed names the file and ENOSPC, and the tokens are written once there is room", async () => {
    const d = await disk();
    const path = join(d.dir, "tokens.json");
    const { tm, clock: c } = manager({ storage: fileStorage(path) }, () => d.fill());
    await signIn(tm);
    const reported: Error[] = [];
    tm.on("storage-failed", ({ error }) => reported.push(error));
    c.advance(900_000);
    expect(await tm.getAccessToken()).toBe("at_2");
    expect(reported).toHaveLength(1);
    expect((reported[0]!.cause as Error).message).toBe(`cannot write the token file ${path} (ENOSPC)`);
    expect((await readdir(d.dir)).filter((n) => n.endsWith(".tmp"))).toEqual([]);
    for (const name of (await readdir(d.dir)).filter((n) => n.startsWith("filler-"))) await rm(join(d.dir, name));
    c.advance(RETRY_PAUSE_MS);
    expect(await tm.getAccessToken()).toBe("at_2");
    expect(await storedTokens(path)).toMatchObject({ access_token: "at_2", refresh_token: "rt_2" });
  });
});
