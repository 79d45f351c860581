/**
 * Regression guard for the cross-tab race the example app's browser test found (Chromium): a tab
 * that takes the Web Lock right after another tab rotated the refresh token can still read the OLD
 * record from localStorage, which reaches other tab processes asynchronously. Sending that
 * rotated-away refresh token gets `invalid_grant`, and the server revokes the whole token family.
 *
 * Here every manager is a tab: the tabs share one lock manager installed as `navigator.locks` (like
 * the browser's, coherent across tabs) and one storage whose views lag behind the other views' writes.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { TransientError } from "./errors.js";
import type { LockManagerLike } from "./lock.js";
import { processLock } from "./lock.js";
import type { TokenStorage } from "./storage/storage.js";
import { BASE, CLIENT_ID, bodyOf, json, setup, signIn, tokens, type Handler } from "./test-support/harness.js";
import { refreshIntents } from "./refresh-intent.js";

const PREFIX = `tenant-integration:${BASE}:${CLIENT_ID}:`;
const TOKENS_KEY = PREFIX + "tokens";

/** A lock manager like `navigator.locks`: one FIFO queue per name, `ifAvailable`, and what is held. */
function lockManager() {
  const waiting = new Map<string, number>();
  const tails = new Map<string, Promise<unknown>>();
  const names: string[] = [];
  const locks: LockManagerLike = {
    request(name, options, task) {
      names.push(name);
      if (options.ifAvailable && waiting.get(name)) return Promise.resolve(task(null));
      waiting.set(name, (waiting.get(name) ?? 0) + 1);
      const run = (tails.get(name) ?? Promise.resolve())
        .then(() => task({ name }))
        .finally(() => waiting.set(name, waiting.get(name)! - 1));
      tails.set(
        name,
        run.catch(() => undefined),
      );
      return run;
    },
  };
  const held = () => [...waiting].filter(([, n]) => n > 0).map(([name]) => name);
  return { locks, names, held };
}

/**
 * One storage seen by several tabs, each through its own view. A view sees its own writes at once; after
 * another view's write, its next `lag` reads still return what it saw before (Chromium's localStorage).
 */
function laggingStorage() {
  const shared = new Map<string, string>();
  const views: { seen: Map<string, string>; behind: number }[] = [];
  const store = {
    lag: 0,
    view(): TokenStorage {
      const me = { seen: new Map(shared), behind: 0 };
      views.push(me);
      const write = async (apply: (m: Map<string, string>) => void) => {
        apply(shared);
        me.seen = new Map(shared);
        for (const other of views) if (other !== me) other.behind = store.lag;
      };
      return {
        async get(key) {
          if (me.behind > 0) me.behind--;
          else me.seen = new Map(shared);
          return me.seen.get(key);
        },
        set: (key, value) => write((m) => m.set(key, value)),
        delete: (key) => write((m) => m.delete(key)),
      };
    },
  };
  return store;
}

/** A token server that rotates and, like the sandbox (RFC 9700 §4.14.2), refuses a rotated-away refresh token. */
function rotatingServer() {
  let n = 1;
  const sent: string[] = [];
  const outcomes: string[] = [];
  const handler: Handler = (call) => {
    const body = bodyOf(call);
    if (body["grant_type"] === "authorization_code") return tokens("at_1", "rt_1");
    sent.push(body["refresh_token"] as string);
    if (body["refresh_token"] !== `rt_${n}`) {
      outcomes.push("invalid_grant");
      return json(400, { error: "invalid_grant" });
    }
    n++;
    outcomes.push("ok");
    return tokens(`at_${n}`, `rt_${n}`);
  };
  return { sent, outcomes, server: { refreshes: 0, queue: [], handler } };
}

/** `count` tabs signed in to one session, on a shared lock manager and a lagging storage, all past expiry. */
async function tabs(count: number, lag: number) {
  const { locks, names, held } = lockManager();
  vi.stubGlobal("navigator", { locks });
  const storage = laggingStorage();
  const { sent, outcomes, server } = rotatingServer();
  const all = Array.from({ length: count }, () => setup({ storage: storage.view() }, server));
  await signIn(all[0]!.tm);
  for (const tab of all) {
    expect(await tab.tm.getAccessToken()).toBe("at_1");
    tab.clock.advance(900_000);
  }
  storage.lag = lag;
  const storedId = async (view: TokenStorage) =>
    (JSON.parse((await view.get(TOKENS_KEY)) ?? "{}") as { id?: string }).id;
  return { all, sent, outcomes, names, held, storedId };
}

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe("tabs whose storage lags behind the Web Lock", () => {
  it.each([2, 5])(
    "%i tabs make exactly one refresh, never send the rotated-away refresh token, and all get the new token",
    async (count) => {
      const { all, sent, outcomes } = await tabs(count, 3);
      const results = await Promise.all(all.flatMap((tab) => [tab.tm.getAccessToken(), tab.tm.getAccessToken()]));
      expect({ sent, outcomes, tokens: new Set(results) }).toEqual({
        sent: ["rt_1"],
        outcomes: ["ok"],
        tokens: new Set(["at_2"]),
      });
    },
  );

  it("hold the marker of the replaced record, named by its id and never by a token, for a bounded time", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout"] });
    const { all, names, held, storedId } = await tabs(1, 0);
    const storage = all[0]!.storage;
    const replaced = await storedId(storage);
    expect(replaced).toMatch(/^[\w-]{43}$/);

    expect(await all[0]!.tm.getAccessToken()).toBe("at_2");

    expect(await storedId(storage)).not.toBe(replaced);
    expect(held()).toEqual([`${PREFIX}rotated:${replaced}`]);
    expect(names.filter((name) => /at_|rt_/.test(name))).toEqual([]);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(held()).toEqual([]);
  });

  it("a tab whose view never catches up gives up with TransientError, keeps the tokens and sends nothing", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout"] });
    const { all, sent } = await tabs(2, 1_000_000);
    const [first, second] = all as [(typeof all)[0], (typeof all)[0]];
    expect(await first.tm.getAccessToken()).toBe("at_2");

    const outcome = second.tm.getAccessToken().catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(10_000);

    expect(await outcome).toBeInstanceOf(TransientError);
    expect(await outcome).toMatchObject({ code: "TRANSIENT", attempts: 0 });
    expect(sent).toEqual(["rt_1"]);
    expect(second.calls).toEqual([]);
    expect(JSON.parse((await first.storage.get(TOKENS_KEY)) ?? "{}")).toMatchObject({ refresh_token: "rt_2" });
  });

  it("mark the old record even when the new one cannot be stored, so no other tab sends the rotated-away token", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout"] });
    const { all, sent, outcomes } = await tabs(2, 0);
    const [first, second] = all as [(typeof all)[0], (typeof all)[0]];
    first.storage.set = async () => {
      throw new DOMException("The quota has been exceeded.", "QuotaExceededError");
    };
    const reported: unknown[] = [];
    first.tm.on("storage-failed", ({ error }) => reported.push(error));
    // The first tab keeps its session in memory and reports the failed write.
    expect(await first.tm.getAccessToken()).toBe("at_2");
    expect(reported).toMatchObject([{ code: "STORAGE_FAILED" }]);

    const outcome = second.tm.getAccessToken().catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(10_000);

    expect(await outcome).toBeInstanceOf(TransientError);
    expect({ sent, outcomes }).toEqual({ sent: ["rt_1"], outcomes: ["ok"] });
  });

  it("takes no marker with a custom lock", async () => {
    const { locks, names } = lockManager();
    vi.stubGlobal("navigator", { locks });
    const h = setup({ lock: processLock(), refreshIntents });
    await signIn(h.tm);
    h.clock.advance(900_000);
    expect(await h.tm.getAccessToken()).toBe("at_2");
    expect(names).toEqual([]);
  });
});
