/**
 * Pending sign-ins by state: each sign-in begun is stored under a name of its own, found at the
 * callback by the `state` it carries, taken once, and dropped by the storage once its lifetime has
 * passed, so any number can be in flight (two tabs, a double click, thousands of users of one
 * server). The format every kit shares: spec/token-store/README.md, "Pending sign-ins by state", and
 * `pending-record.schema.json`. The same module as the Go kit's `pending.go`.
 *
 * @see RFC 6749 §10.12 (state); RFC 7636 §4.1 (verifier)
 */
import { sha256Hex } from "./encoding.js";
import type { SessionLogger } from "./logger.js";
import type { TokenStorage } from "./storage/storage.js";

/** A pending sign-in, as `pending-record.schema.json` describes it. */
export interface PendingRecord {
  readonly state: string;
  readonly verifier: string;
  /** Milliseconds since the epoch, by the writer's clock. */
  readonly expiresAt: number;
  /** The session the tokens will be stored under; absent for a manager without one. */
  readonly sessionId?: string | undefined;
  /** The lowercase hex SHA-256 of the browser binding; absent where the sign-in is not bound. */
  readonly browser?: string | undefined;
}

const FIELDS: Readonly<Record<keyof PendingRecord, (v: unknown) => boolean>> = {
  state: (v) => typeof v === "string" && /^[A-Za-z0-9_-]{43}$/.test(v),
  verifier: (v) => typeof v === "string" && /^[A-Za-z0-9._~-]{43,128}$/.test(v),
  expiresAt: (v) => Number.isSafeInteger(v) && (v as number) >= 0,
  sessionId: (v) => typeof v === "string" && /^[A-Za-z0-9\-._~@+=|]{1,128}$/.test(v),
  browser: (v) => typeof v === "string" && /^[0-9a-f]{64}$/.test(v),
};

/**
 * The key of a pending sign-in: the first 32 lowercase hex digits of SHA-256 of its state's UTF-8
 * bytes. The state itself never appears in a name, a key or a log.
 *
 * @example
 * ```ts
 * await pendingKey("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"); // "13d31e961a1ad8ec2f16b10c4c982e08"
 * ```
 */
export const pendingKey = async (state: string): Promise<string> => (await sha256Hex(state)).slice(0, 32);

/**
 * The record as every kit writes it: `{"state","verifier","expiresAt"}` then `sessionId` and
 * `browser` when there are any, in that key order, without spaces.
 */
export const serializePending = (r: PendingRecord): string =>
  JSON.stringify({
    state: r.state,
    verifier: r.verifier,
    expiresAt: r.expiresAt,
    sessionId: r.sessionId,
    browser: r.browser,
  });

/** Reads a pending record; `undefined` for a value that does not validate (it reads as no pending sign-in). */
export function parsePending(raw: string | null | undefined): PendingRecord | undefined {
  if (typeof raw !== "string") return undefined;
  let data: unknown;
  try {
    data = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) return undefined;
  const record = data as Record<string, unknown>;
  for (const required of ["state", "verifier", "expiresAt"]) if (!(required in record)) return undefined;
  for (const [k, v] of Object.entries(record))
    if (!(k in FIELDS) || !FIELDS[k as keyof PendingRecord](v)) return undefined;
  return record as unknown as PendingRecord;
}

/** The storages already warned about a capability they lack: once per storage. */
const warned = new WeakSet<TokenStorage>();

/** Warns once per storage that lacks `setExpiring` or `take` (spec/token-store/README.md, "What a storage offers"). */
function warnFallback(storage: TokenStorage, log: SessionLogger | undefined): void {
  if (warned.has(storage) || (storage.setExpiring && storage.take)) return;
  warned.add(storage);
  const missing = [storage.setExpiring ? "" : "setExpiring", storage.take ? "" : "take"].filter(Boolean);
  log?.("pending-fallback", { missing: missing.join(", ") });
}

/**
 * Stores a pending sign-in under `name` for `lifetimeMs`: `setExpiring` where the storage has it,
 * else `set` (an abandoned sign-in then stays until the app removes it; its `expiresAt` refuses it).
 */
export function putPending(
  storage: TokenStorage,
  name: string,
  record: PendingRecord,
  lifetimeMs: number,
  log: SessionLogger | undefined,
): Promise<void> {
  warnFallback(storage, log);
  const text = serializePending(record);
  return storage.setExpiring ? storage.setExpiring(name, text, lifetimeMs) : storage.set(name, text);
}

/**
 * Takes the value under `name`: read and deleted in one step with `take` (of two callbacks with one
 * state, at most one gets it); without it, `get` then `delete`, which is not atomic.
 */
export async function takePending(
  storage: TokenStorage,
  name: string,
  log: SessionLogger | undefined,
): Promise<string | null | undefined> {
  warnFallback(storage, log);
  if (storage.take) return storage.take(name);
  const raw = await storage.get(name);
  if (raw !== undefined && raw !== null) await storage.delete(name);
  return raw;
}
