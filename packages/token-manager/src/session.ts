/**
 * The session as storage holds it: reading the token record (and saying so when it is unreadable),
 * writing it, clearing it, and what the manager tells about it without a request (`getSession`,
 * `isSignedIn`), sign-out and `onUnauthorized`.
 *
 * @see RFC 6749 §1.5 (the refresh token outlives the access token), §5.1
 */
import { fail, TokenManagerError } from "./errors.js";
import { emit } from "./events.js";
import { haltBeats, known, type ManagerState, store, whereIs } from "./manager-state.js";
import { sanitize } from "./redact.js";
import { announce } from "./tabs.js";
import { isFresh, parseRecord, serializeRecord, sessionInfo, type TokenRecord } from "./token-record.js";
import type { SessionInfo } from "./types.js";

/** Whether `t`'s access token is usable now, by this manager's clock and leeway. */
export const fresh = (state: ManagerState, t: TokenRecord): boolean => isFresh(t, state.now(), state.refreshLeewayMs);

/** What the manager tells about `t`'s session, by this manager's clock. */
export const info = (state: ManagerState, t: TokenRecord): SessionInfo => sessionInfo(t, state.now());

/** Stored tokens found unreadable: a warning and `storage-failed`, so that a caller asking only `isSignedIn()` learns it too. */
function reportUnreadable(state: ManagerState, what: string, cause?: Error): void {
  state.log?.("tokens-unreadable", { reason: what });
  const error = new TokenManagerError(
    "STORAGE_FAILED",
    "STORAGE_FAILED: the stored tokens were unreadable: " + what,
    cause,
  );
  emit(state, "storage-failed", { error });
}

/**
 * Reads the token record; `undefined` when there is none.
 *
 * @param quiet - a poll, which does not report a value that is not a token record (the read that
 * acts on it does)
 * @throws a `TokenManagerError`: `STORAGE_FAILED` when the storage cannot be read; `NOT_SIGNED_IN`
 * when its data was unreadable (set aside by the storage, or not a token record), reported by a
 * warning and `storage-failed` (issue 27: the data set aside may hold the only copy of a refresh token).
 */
export async function loadRecord(state: ManagerState, { quiet = false } = {}): Promise<TokenRecord | undefined> {
  let raw: string | null | undefined;
  try {
    raw = await state.storage.get(state.keys.tokens);
  } catch (e) {
    // A storage that found its data unreadable and set it aside (fileStorage's FILE_CORRUPT) has no
    // tokens now: that is no session, with the reason as the cause of NOT_SIGNED_IN.
    const cause = sanitize(e, known(state));
    if ((e as { reset?: unknown } | undefined)?.reset !== true) return fail("STORAGE_FAILED", "", cause);
    reportUnreadable(state, cause.message, cause);
    return fail("NOT_SIGNED_IN", "the stored tokens were unreadable", cause);
  }
  const record = parseRecord(raw);
  if (record || raw === undefined || raw === null) return record;
  // A value that is not a token record reads as no session (spec/token-store/README.md), but is
  // reported rather than taken for "no tokens"; it is left in place for a sign-in to replace.
  const what = `the value under ${whereIs(state, state.keys.tokens)} is not a token record; signing in replaces it`;
  if (!quiet) reportUnreadable(state, what);
  return fail("NOT_SIGNED_IN", "the stored tokens are unreadable: " + what);
}

/**
 * Persists the tokens and makes them current. When the write fails they are current all the same
 * (the tenant has already rotated the refresh token: throwing them away would end the session), kept
 * as `unsaved` to be written again on the next call, and the `STORAGE_FAILED` error is thrown.
 */
export async function commit(state: ManagerState, t: TokenRecord): Promise<SessionInfo> {
  state.unsaved = state.current = t;
  await store(state, () => state.storage.set(state.keys.tokens, serializeRecord(t)));
  if (state.unsaved === t) state.unsaved = undefined;
  return info(state, t);
}

/** Forgets the tokens, here and in storage; a refresh under way will not store its own. */
export function clear(state: ManagerState): Promise<void> {
  state.generation++;
  state.current = state.unsaved = undefined;
  return store(state, () => state.storage.delete(state.keys.tokens));
}

/** Clears the tokens at the user's request, and fires `signed-out` here and in the other tabs. */
export async function signOut(state: ManagerState, revoked = false): Promise<void> {
  // Signed out: this process's intent is beaten no more (a waiter's watch gives it up).
  void haltBeats(state);
  await clear(state);
  announce(state, { event: "signed-out", revoked });
}

/** The session as storage (or, after a failed write, this process) holds it; `undefined` when there is none. */
export async function getSession(state: ManagerState): Promise<SessionInfo | undefined> {
  // Tokens whose write failed are this process's session, whatever storage says.
  if (state.unsaved && state.current === state.unsaved) return info(state, state.unsaved);
  try {
    const stored = await loadRecord(state);
    return stored && info(state, stored);
  } catch (e) {
    // Unreadable data (reported by loadRecord): no session.
    if ((e as TokenManagerError).code === "NOT_SIGNED_IN") return undefined;
    throw e;
  }
}

/** Whether there is a session (see {@link getSession}). */
export async function isSignedIn(state: ManagerState): Promise<boolean> {
  return (await getSession(state)) !== undefined;
}

/** Marks the current access token unusable when it is `rejectedToken`, so the next call refreshes. */
export function onUnauthorized(state: ManagerState, rejectedToken: string): void {
  if (state.current?.access_token === rejectedToken) {
    state.rejected = rejectedToken;
    state.current = undefined;
  }
}
