import type { TokenStorage } from "./storage.js";

/** The part of the Web Storage API that {@link webStorage} uses. */
export interface WebStorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
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
 * that before choosing it over `memoryStorage()`.
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
