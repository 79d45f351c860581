/**
 * `getAccessToken`: a valid access token, refreshed once (however many callers) under the refresh
 * lock when it is within the leeway of expiry or was refused, in the steps of the refresh protocol
 * (spec/token-store/README.md, "Paused processes"); and the tokens whose write failed, which are
 * handed out, written again later, and never refreshed from until written (issue 27). The same
 * module as the Python kit's `_refresh.py`.
 *
 * @see RFC 6749 §6; RFC 9700 §4.14.2 (refresh token rotation)
 */
import { fail, type OAuthResponseError, SessionEndedError, TokenManagerError, TransientError } from "./errors.js";
import { emit } from "./events.js";
import { type HeldLock, LockLost } from "./lock.js";
import { known, type ManagerState } from "./manager-state.js";
import { sanitize } from "./redact.js";
import type { Intent } from "./refresh-intent.js";
import { sleep } from "./running-time.js";
import { clear, commit, fresh, loadRecord } from "./session.js";
import { announce, markRotatedAway, notRotatedAway } from "./tabs.js";
import { supersedes, type TokenRecord } from "./token-record.js";
import { mayRetry, refreshTokenGrantRequest, requestTokens } from "./token-request.js";
import type { SessionInfo } from "./types.js";

/**
 * After a failed write of new tokens, how long they are handed out from memory before the write is
 * tried (and a failure reported) again: a storage that is down costs one attempt and one
 * `storage-failed` a second, not one per call.
 */
const UNSAVED_RETRY_MS = 1000;
/** The longest wait before a refresh is sent again: the backoff's cap, and the longest Retry-After waited. */
const MAX_RETRY_DELAY_MS = 10_000;
/** How many times the lock is taken again after it was found lost before a refresh left. */
const LOCK_TRIES = 3;

/** What a refresh that sent nothing it could use returns: decide again from what storage holds now. */
interface DecideAgain {
  /** Whether the refresh was refused, so that a second refusal ends the session without another look. */
  readonly again: boolean;
}

/** Whether `t` can be handed out as it is: fresh, and not the access token an API refused. */
const usable = (state: ManagerState, t: TokenRecord): boolean => fresh(state, t) && t.access_token !== state.rejected;

/**
 * The one resolved promise handed out for each record while it is served as it is. Keyed by the
 * record, so a promise never outlives its tokens' being current: a record that is replaced (refresh,
 * sign-in, another tab's tokens) or dropped (sign-out, onUnauthorized) is no longer served, and its
 * promise with it. Whether the record may still be served is decided on every call, never cached.
 */
const resolvedFor = new WeakMap<TokenRecord, Promise<string>>();

/**
 * Returns a valid access token (see `TokenManager.getAccessToken`). Concurrent callers share one
 * call. With a lock that processes share, storage is read first without it: when another process
 * has already stored fresh tokens, they are used and the lock is neither awaited nor taken.
 *
 * While the token in use is served as it is, every call returns the same already-resolved promise:
 * a caller that has seen it resolve (the client's middleware) adds the header without awaiting
 * (issue 28). Freshness is still checked on every call, by this manager's clock.
 */
export function getAccessToken(state: ManagerState): Promise<string> {
  let served: TokenRecord | undefined;
  try {
    served = servedAsIs(state);
  } catch (e) {
    // a clock (the `now` option) that throws: a rejection, as from every other step
    return Promise.reject(e);
  }
  if (!served) return obtainShared(state);
  let resolved = resolvedFor.get(served);
  if (!resolved) resolvedFor.set(served, (resolved = Promise.resolve(served.access_token)));
  return resolved;
}

/**
 * The record in use when it can be handed out with nothing to do: fresh, and either written or, when
 * its write failed, within the pause before that write is tried again (a call then goes through
 * {@link obtainShared} to retry it, at most once a second).
 */
function servedAsIs(state: ManagerState): TokenRecord | undefined {
  const { current, unsaved } = state;
  if (!current || !fresh(state, current)) return undefined;
  if (unsaved && (current !== unsaved || state.now() >= state.retryWriteAfter)) return undefined;
  return current;
}

/**
 * The call under way that obtains a token (reading storage, refreshing, writing again), started if
 * there is none. Async, so that whatever a step throws (a lock, a storage) reaches the caller as a
 * rejection.
 */
async function obtainShared(state: ManagerState): Promise<string> {
  const { current, unsaved } = state;
  if (!state.inflight) {
    state.log?.("lock-wait", {});
    const held = unsaved && current === unsaved && fresh(state, unsaved) ? unsaved : undefined;
    const run = (state.intents && !unsaved ? readFirst(state) : underLock(state)).catch((e: unknown) => {
      state.intents?.failed(state, e);
      throw e;
    });
    state.inflight = (held ? servingUnsaved(state, run, held) : run).finally(() => (state.inflight = undefined));
  }
  return state.inflight;
}

/** Fresh tokens in storage, read without the lock; else the lock is taken (and storage read again under it). */
async function readFirst(state: ManagerState): Promise<string> {
  const stored = await freshInStorage(state, loadRecord(state));
  if (!stored) return underLock(state);
  state.log?.("fresh-in-storage", {});
  state.current = stored;
  return stored.access_token;
}

/**
 * Tokens in storage usable as they are (fresh, not refused, no unsaved record of ours to write back):
 * another process refreshed them. `undefined` when they must be refreshed, or sign-in or sign-out
 * happened meanwhile.
 */
async function freshInStorage(
  state: ManagerState,
  read: Promise<TokenRecord | undefined>,
): Promise<TokenRecord | undefined> {
  const before = state.generation;
  const stored = await read;
  return stored && before === state.generation && !state.unsaved && usable(state, stored) ? stored : undefined;
}

/**
 * Takes the refresh lock and decides under it ({@link obtain}). With a lock that processes share,
 * each wake of the wait re-reads storage, and the wait ends once another process has stored fresh
 * tokens. The lock is taken again after waiting for another refresh's intent, and when it was found
 * lost before a refresh left (this process was paused and another took it over).
 */
function underLock(state: ManagerState): Promise<string> {
  // Set when the wait for the lock ended because storage came to hold fresh tokens.
  let found: TokenRecord | undefined;
  const until = async () =>
    (found = await freshInStorage(
      state,
      loadRecord(state, { quiet: true }).catch(() => undefined),
    )) !== undefined;
  // A session's lock is its own (a file storage gives it a directory of its own).
  const { sessionId } = state;
  const wait = state.intents ? (sessionId === undefined ? { until } : { until, sessionId }) : undefined;
  const task = (held?: HeldLock) => {
    state.log?.("lock-taken", {});
    return obtain(state, held);
  };
  const attempt = (tries: number): Promise<string> =>
    state.lock(state.keys.lock, task, wait).catch(async (e: unknown) => {
      if (found) {
        state.log?.("fresh-while-waiting", {});
        state.current = found;
        return found.access_token;
      }
      // Another refresh's intent, found under the lock: waited for outside it.
      if (await state.intents?.waitOut(state, e)) return attempt(tries);
      if (!(e instanceof LockLost)) throw e;
      state.log?.("lock-lost", { tries });
      if (tries >= LOCK_TRIES) throw new TransientError(undefined, 0);
      return attempt(tries + 1);
    });
  return attempt(1);
}

/**
 * For tokens whose write failed and that are still fresh: the outcome of retrying the write, or,
 * when the retry cannot even run (the storage or its lock is unreachable: Redis down, a lock
 * timeout), the tokens all the same. The tenant has them as current; failing the call would
 * only make the one process that holds them unable to use them. The failure is reported with
 * `storage-failed`, and the write is tried again on the next call.
 */
function servingUnsaved(state: ManagerState, retry: Promise<string>, held: TokenRecord): Promise<string> {
  return retry.catch((e: unknown) => {
    // Signed out or in again meanwhile, or expired while the lock was awaited: nothing to hand out.
    if (state.current !== held || state.unsaved !== held || !fresh(state, held)) throw e;
    state.log?.("rewrite-failed", {});
    reportUnsaved(state, new TokenManagerError("STORAGE_FAILED", "STORAGE_FAILED", sanitize(e, known(state))));
    return held.access_token;
  });
}

/**
 * Runs under the lock: re-reads storage (step 1), and refreshes only if what it finds is not usable.
 * A tab whose storage lags behind (its record marked rotated away by another tab) re-reads, bounded,
 * until the record that replaced it shows.
 */
async function obtain(state: ManagerState, held?: HeldLock): Promise<string> {
  let again = false;
  for (let polls = 0; ; ) {
    const stored = await readUnderLock(state);
    if (!stored) return fail("NOT_SIGNED_IN");
    if (usable(state, stored)) {
      state.current = stored;
      return stored.access_token;
    }
    // Rejects on another refresh's live intent: released, and waited for outside the lock (see underLock).
    await state.intents?.check(state, stored);
    if (await notRotatedAway(state, stored)) {
      const outcome = await refresh(state, stored, again, held);
      if (typeof outcome === "string") return outcome;
      again = outcome.again;
      polls = 0;
      continue;
    }
    // Never send a refresh token marked rotated away: re-read until its successor shows.
    if (polls++ > 99) throw new TransientError(undefined, 0);
    await sleep(30);
  }
}

/**
 * The record to decide with, under the lock. With a record whose write failed, storage is still read
 * first: another process may have stored newer tokens meanwhile (or the write went through after
 * all), and those must not be overwritten with ours, whose refresh token may be rotated away by now.
 * Ours is written again only over a record it does not supersede (see `supersedes`). A storage that
 * cannot even be read leaves ours in use.
 *
 * @throws a `TokenManagerError` `STORAGE_FAILED` when ours need a refresh and still cannot be written.
 */
async function readUnderLock(state: ManagerState): Promise<TokenRecord | undefined> {
  const ours = state.unsaved;
  if (!ours) return loadRecord(state);
  let stored = await loadRecord(state).catch(() => undefined);
  if (stored && supersedes(stored, ours)) state.unsaved = undefined;
  else {
    stored = ours;
    try {
      await commit(state, ours);
    } catch (e) {
      reportUnsaved(state, e as TokenManagerError);
      // Never refresh from tokens that are not stored (issue 27): the refresh would check storage
      // for a record that can never appear there, and every further rotation would widen the gap
      // between the tenant and what the other processes read. The tokens stay kept, and are
      // written, then refreshed from, once the storage takes them.
      if (!usable(state, ours)) {
        fail(
          "STORAGE_FAILED",
          "the refreshed tokens cannot be written, so they are not refreshed again until they are",
          (e as TokenManagerError).cause,
        );
      }
    }
  }
  // Written (or superseded): this process's intent on the old token has done its job.
  if (!state.unsaved) await state.intents?.drop(state, state.ownIntent);
  return stored;
}

/**
 * Refreshes `stored` under the lock `held` (steps 3 to 7): checks the lock, writes the intent, sends
 * (with the bounded retries of step 6), and stores the new tokens. `again` when this is the second
 * try after an `invalid_grant`.
 *
 * @returns the new access token, or {@link DecideAgain} when storage changed before the request left
 * or another process had rotated the token that was refused
 */
async function refresh(
  state: ManagerState,
  stored: TokenRecord,
  again: boolean,
  held?: HeldLock,
): Promise<string | DecideAgain> {
  const generation = state.generation;
  // With a storage that processes share, steps 3 and 4: the lock still ours (else LockLost), then the
  // intent (no intent, no send, D6: an unwritable one rejects with STORAGE_FAILED). Nothing sent then.
  const intent = await state.intents?.write(state, stored.refresh_token, held);
  state.log?.("refresh-started", {});
  let tokens: TokenRecord | DecideAgain;
  try {
    tokens = await sendRefresh(state, stored, intent, again, held);
  } catch (e) {
    if (e instanceof LockLost) throw e;
    await state.intents?.drop(state, intent);
    if (e instanceof TransientError && !mayRetry(e)) state.log?.("refresh-not-retried", { status: e.status });
    return refused(state, e, stored, again, generation);
  }
  if (!("access_token" in tokens)) return tokens;
  if (generation !== state.generation) {
    await state.intents?.drop(state, intent);
    fail("NOT_SIGNED_IN");
  }
  await markRotatedAway(state, stored);
  const info = await commitOrReport(state, tokens);
  if (info) {
    // Stored: the intent has done its job. Kept while the write fails, so that the others do
    // not present the old token while this process writes the new one again.
    await state.intents?.drop(state, intent);
    state.log?.("refresh-finished", { expiresAt: info.expiresAt });
    emit(state, "tokens-refreshed", info);
  } else {
    state.log?.("refresh-unsaved", {});
  }
  return tokens.access_token;
}

/**
 * Sends the refresh request, after the last checks right before it leaves (step 5: the record is
 * still the one read, the lock still this process's own), and again while {@link mayRetry} allows,
 * after the backoff or the answer's Retry-After.
 */
async function sendRefresh(
  state: ManagerState,
  stored: TokenRecord,
  intent: Intent | undefined,
  again: boolean,
  held?: HeldLock,
): Promise<TokenRecord | DecideAgain> {
  const { access_token, refresh_token } = stored;
  const { attempts, baseDelayMs } = state.retry;
  for (let attempt = 1; ; attempt++) {
    try {
      // Step 5: storage changed meanwhile is decided again; a lock gone rejects (LockLost), nothing sent.
      if (state.intents && !(await state.intents.stillOurs(state, stored, intent, held))) return { again };
      const request = refreshTokenGrantRequest(state.clientId, refresh_token);
      return await requestTokens(state, request, known(state, access_token, refresh_token), stored, attempt);
    } catch (e) {
      // A Retry-After is waited instead of the backoff; one over the cap is not waited at all: the
      // error says when to try again (as the Python manager and the client do).
      if (!(e instanceof TransientError) || !mayRetry(e) || attempt >= attempts) throw e;
      const { retryAfterMs } = e;
      if (retryAfterMs !== undefined && retryAfterMs > MAX_RETRY_DELAY_MS) throw e;
      const delayMs = retryAfterMs ?? Math.min(baseDelayMs * 2 ** (attempt - 1), MAX_RETRY_DELAY_MS);
      state.log?.("refresh-retry", { attempt, status: e.status, delayMs });
      await sleep(delayMs);
    }
  }
}

/**
 * A refresh that failed: anything but `invalid_grant` reaches the caller as it is. An `invalid_grant`
 * ends the session, unless another process has rotated the token meanwhile: the newest one is tried
 * once first. A storage that cannot be read leaves that unknown: the session is not ended (which
 * would delete the record for every process), and the read failure reaches the caller.
 */
async function refused(
  state: ManagerState,
  e: unknown,
  stored: TokenRecord,
  again: boolean,
  generation: number,
): Promise<DecideAgain> {
  if ((e as OAuthResponseError).error !== "invalid_grant") throw e;
  let latest: TokenRecord | undefined;
  if (!again) {
    try {
      latest = await loadRecord(state);
    } catch (readError) {
      if ((readError as TokenManagerError).code !== "NOT_SIGNED_IN") throw readError;
    }
  }
  if (latest && latest.refresh_token !== stored.refresh_token) return { again: true };
  const ended = new SessionEndedError((e as OAuthResponseError).status, e as OAuthResponseError);
  if (generation === state.generation) {
    state.log?.("session-ended", { status: ended.status });
    // The session is over whether or not the delete succeeds.
    await clear(state).catch(() => {});
    const { error, errorDescription, errorUri } = ended;
    const fields = { error, ...(errorDescription && { errorDescription }), ...(errorUri && { errorUri }) };
    announce(state, { event: "session-ended", status: ended.status, fields }, ended);
  }
  throw ended;
}

/** {@link commit} for a refresh or a retried write: a failed write is reported, the session goes on. */
async function commitOrReport(state: ManagerState, t: TokenRecord): Promise<SessionInfo | undefined> {
  try {
    return await commit(state, t);
  } catch (e) {
    reportUnsaved(state, e as TokenManagerError);
    return undefined;
  }
}

/**
 * A failed write of new tokens: `storage-failed`, and the write tried again in a second even if no
 * call comes: the storage may have come back with the old record (Redis restarted from its
 * append-only file), and the others, honouring this process's intent, wait for exactly this write.
 */
function reportUnsaved(state: ManagerState, error: TokenManagerError): void {
  state.retryWriteAfter = state.now() + UNSAVED_RETRY_MS;
  emit(state, "storage-failed", { error });
  retryWriteLater(state);
}

/**
 * Tries the write of unsaved tokens again in a second, and again each second while they stay
 * unsaved (fresh, and still this process's own): a retry that joined a call begun before it (whose
 * lock release an outage held up) wrote nothing, and the others wait for this write (D1: they give
 * the intent up only after watching it for intentWaitMs with the storage answering). One timer at a
 * time, which does not keep a Node process alive; none once the manager is closed.
 */
function retryWriteLater(state: ManagerState): void {
  if (state.rewriteTimer || state.closed) return;
  const timer = setTimeout(async () => {
    state.rewriteTimer = undefined;
    const { unsaved, current } = state;
    if (state.closed || !unsaved || current !== unsaved || !fresh(state, unsaved)) return;
    await getAccessToken(state).catch(() => {});
    if (state.unsaved === unsaved && state.current === unsaved) retryWriteLater(state);
  }, UNSAVED_RETRY_MS + 10);
  (timer as { unref?(): void }).unref?.();
  state.rewriteTimer = timer;
}
