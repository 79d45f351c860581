import type { TokenStorage } from "./storage.js";

/**
 * A storage that lives in memory and ends with the process or page. The default storage. It offers
 * `setExpiring` (an expired value reads as absent and is dropped when read, and every write drops
 * the expired ones) and `take`, so pending sign-ins never pile up and each is taken once.
 *
 * @example
 * ```ts
 * const tm = createTokenManager({ ...options, storage: memoryStorage() });
 * ```
 * @see RFC 6749 §10.3
 */
export function memoryStorage(): TokenStorage {
  const map = new Map<string, string>();
  /** Until when (`Date.now()` ms) each value written with `setExpiring` lives. */
  const deadlines = new Map<string, number>();
  const expired = (key: string): boolean => {
    const deadline = deadlines.get(key);
    if (deadline === undefined || Date.now() < deadline) return false;
    map.delete(key);
    deadlines.delete(key);
    return true;
  };
  const sweep = () => {
    for (const key of deadlines.keys()) expired(key);
  };
  return {
    get: async (key) => (expired(key) ? undefined : map.get(key)),
    set: async (key, value) => {
      sweep();
      deadlines.delete(key);
      map.set(key, value);
    },
    delete: async (key) => {
      deadlines.delete(key);
      map.delete(key);
    },
    setExpiring: async (key, value, lifetimeMs) => {
      sweep();
      map.set(key, value);
      deadlines.set(key, Date.now() + lifetimeMs);
    },
    take: async (key) => {
      const value = expired(key) ? undefined : map.get(key);
      map.delete(key);
      deadlines.delete(key);
      return value;
    },
  };
}
