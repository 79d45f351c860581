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
 * Web Locks coordination then makes N tabs refresh once. Anything that can run script in the origin
 * can read it: weigh that before choosing it over `memoryStorage()`.
 *
 * @example
 * ```ts
 * createTokenManager({ ...options, storage: webStorage(localStorage), pendingStorage: webStorage(sessionStorage) });
 * ```
 * @see RFC 6749 §10.3; OAuth 2.0 for Browser-Based Apps (draft-ietf-oauth-browser-based-apps) §8
 */
export function webStorage(storage: WebStorageLike): TokenStorage {
  return {
    get: async (key) => storage.getItem(key),
    set: async (key, value) => storage.setItem(key, value),
    delete: async (key) => storage.removeItem(key),
  };
}
