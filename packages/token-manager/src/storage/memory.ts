import type { TokenStorage } from "./storage.js";

/**
 * A storage that lives in memory and ends with the process or page. The default storage.
 *
 * @example
 * ```ts
 * const tm = createTokenManager({ ...options, storage: memoryStorage() });
 * ```
 * @see RFC 6749 §10.3
 */
export function memoryStorage(): TokenStorage {
  const map = new Map<string, string>();
  return {
    get: async (key) => map.get(key),
    set: async (key, value) => void map.set(key, value),
    delete: async (key) => void map.delete(key),
  };
}
