import type { TokenStorage } from "./storage.js";

/** The part of the Web Storage API that {@link webStorage} uses. */
export interface WebStorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
  /** How many keys there are (Web Storage has it): with `key`, lets `setExpiring` drop expired sign-ins. */
  readonly length?: number;
  /** The name of the `index`th key (Web Storage has it). */
  key?(index: number): string | null;
}

/** The end of a pending sign-in's name (spec/token-store/README.md, "Pending sign-ins by state"). */
const PENDING_NAME = /:pending:[0-9a-f]{32}$/;

/** Whether the pending record `raw` has expired by this clock: an unreadable one counts as expired. */
function expiredPending(raw: string | null, now: number): boolean {
  try {
    const expiresAt = (JSON.parse(raw as string) as { expiresAt?: unknown }).expiresAt;
    return !(typeof expiresAt === "number" && now <= expiresAt);
  } catch {
    return true;
  }
}

/** Drops the expired pending sign-ins of `storage`, when it can list its keys. */
function dropExpiredPending(storage: WebStorageLike): void {
  if (typeof storage.key !== "function" || typeof storage.length !== "number") return;
  const now = Date.now();
  const names: string[] = [];
  for (let i = 0; i < storage.length; i++) names.push(storage.key(i) ?? "");
  for (const name of names)
    if (PENDING_NAME.test(name) && expiredPending(storage.getItem(name), now)) storage.removeItem(name);
}

/**
 * Adapts `localStorage` or `sessionStorage` (or anything with `getItem`, `setItem`, `removeItem`).
 * A failing `setItem` (quota, private mode) becomes a rejected promise.
 *
 * `localStorage` is shared by the tabs of an origin, so the tabs share one session; the manager's
 * Web Locks coordination then makes N tabs refresh once. For `localStorage` itself, the adapter also
 * carries `webStorage(sessionStorage)` as its `tabStorage`: the manager keeps each tab's pending
 * sign-in there (so tabs signing in at once do not take each other's), and tells the other tabs of
 * sign-ins and sign-outs. Anything that can run script in the origin can read `localStorage`: weigh
 * that before choosing it over `memoryStorage()`. Pending sign-ins are taken once (`take`), and the
 * expired ones are dropped as new ones are written (`setExpiring`, for a storage that lists its keys).
 *
 * @example
 * ```ts
 * createTokenManager({ ...options, storage: webStorage(localStorage) }); // pending sign-in: this tab's sessionStorage
 * ```
 * @see RFC 6749 §10.3, §10.12; OAuth 2.0 for Browser-Based Apps (draft-ietf-oauth-browser-based-apps) §8
 */
export function webStorage(storage: WebStorageLike): TokenStorage {
  const adapter: TokenStorage = {
    get: async (key) => storage.getItem(key),
    set: async (key, value) => storage.setItem(key, value),
    delete: async (key) => storage.removeItem(key),
    // Pending sign-ins: a record keeps its own expiry, so expired ones are dropped as others are
    // written; a take reads and removes in one synchronous step, which no other script can split.
    setExpiring: async (key, value) => {
      dropExpiredPending(storage);
      storage.setItem(key, value);
    },
    take: async (key) => {
      const value = storage.getItem(key);
      storage.removeItem(key);
      return value;
    },
  };
  const tab = sessionStorageBeside(storage);
  return tab ? { ...adapter, tabStorage: webStorage(tab) } : adapter;
}

/** This tab's `sessionStorage` when `storage` is the page's `localStorage`, else `undefined`. */
function sessionStorageBeside(storage: WebStorageLike): WebStorageLike | undefined {
  const page = globalThis as { localStorage?: WebStorageLike; sessionStorage?: WebStorageLike };
  try {
    return "localStorage" in page && storage === page.localStorage ? page.sessionStorage : undefined;
  } catch {
    // An opaque origin (a sandboxed iframe) throws on reading either.
    return undefined;
  }
}
