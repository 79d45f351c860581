/**
 * The token record every kit stores (spec/token-store/token-record.schema.json): the token response in
 * its own field names, the local receive time, an id, and the session's lineage. Its rules, from
 * spec/token-store/README.md: how it is read, when it expires, and which of two records wins. The
 * same module as the Python kit's `_token_record.py`.
 *
 * Records stay inside the manager: no method, event or error returns or carries one (the manager
 * hands out the access token string alone, and copies what it tells into new objects).
 *
 * @see RFC 6749 §5.1 (the token response), §6 (refresh)
 */
import { isString } from "./encoding.js";
import { parseJson, parseTokenResponse, type ParsedTokenResponse } from "./token-response.js";
import { createState } from "./state.js";
import type { SessionInfo } from "./types.js";

/** The stored record, in the token response's own field names, plus the local receive time and an id. */
export interface TokenRecord {
  readonly access_token: string;
  readonly refresh_token: string;
  readonly token_type: string;
  readonly expires_in: number;
  readonly scope: string | undefined;
  readonly received_at: number;
  /** Random, unique per record (unlike `received_at` under a coarse or fixed clock): names the record in lock names, never a token. */
  readonly id: string;
  /**
   * The id of the sign-in's record this one descends from, and how many refreshes lie between them
   * (0 for the sign-in's own): they order the records of one session without comparing the clocks
   * of the processes that wrote them.
   */
  readonly session: string;
  readonly seq: number;
}

/**
 * A new record from a token response received at `receivedAt`: a sign-in's (no `from`) starts a
 * session; a refresh's descends from `from`, the record whose refresh token it presented.
 */
export function newRecord(parsed: ParsedTokenResponse, receivedAt: number, from?: TokenRecord): TokenRecord {
  const id = createState();
  const lineage = from ? { session: from.session, seq: from.seq + 1 } : { session: id, seq: 0 };
  return { ...parsed, received_at: receivedAt, id, ...lineage };
}

/**
 * Reads a stored record; `undefined` when `raw` is absent or is not a token record (one that does not
 * validate against token-record.schema.json reads as no session).
 */
export function parseRecord(raw: string | null | undefined): TokenRecord | undefined {
  const record = parseJson(raw) as Partial<Record<"received_at" | "id" | "session" | "seq", unknown>>;
  const { received_at, id, session, seq } = record;
  if (typeof received_at !== "number" || !(received_at >= 0)) return undefined;
  if (!isString(id) || !id || !isString(session) || !session) return undefined;
  if (typeof seq !== "number" || !Number.isInteger(seq) || seq < 0) return undefined;
  try {
    return { ...parseTokenResponse(record), received_at, id, session, seq };
  } catch {
    return undefined;
  }
}

/** The record's stored form. */
export const serializeRecord = (t: TokenRecord): string => JSON.stringify(t);

/**
 * When the record was received, as this clock can tell: never later than now. A record stamped in
 * this clock's future was written by a process whose clock runs ahead; it counts as received now,
 * so a fleet with skewed clocks makes one refresh per expiry, not one per clock behind.
 */
export const receivedAt = (t: TokenRecord, now: number): number => Math.min(t.received_at, now);

/** What the manager tells about the record's session: when its access token expires, and the scope. */
export const sessionInfo = (t: TokenRecord, now: number): SessionInfo => ({
  expiresAt: receivedAt(t, now) + t.expires_in * 1000,
  scope: t.scope,
});

/** Whether the access token is usable as it is: not within `leewayMs` (at most half its lifetime) of expiry. */
export function isFresh(t: TokenRecord, now: number, leewayMs: number): boolean {
  const lifetime = t.expires_in * 1000;
  // Stamped further ahead than the token lives: not skew but a wrong clock (this one or the
  // writer's). Refreshing then stamps the record with this clock.
  if (t.received_at - now > lifetime) return false;
  return now - receivedAt(t, now) < lifetime - Math.min(leewayMs, lifetime / 2);
}

/**
 * Whether the stored record supersedes `ours`, whose write failed: it is ours (the write went
 * through after all), or a later record of the same session (another process refreshed from
 * ours), whatever the clocks say. A record of another session supersedes a refresh of ours
 * (storage has moved on since ours was read); between two sign-ins, both valid, the later wins.
 */
export function supersedes(stored: TokenRecord, ours: TokenRecord): boolean {
  if (stored.id === ours.id) return true;
  if (stored.session === ours.session) return stored.seq >= ours.seq;
  return ours.seq > 0 || stored.received_at >= ours.received_at;
}
