/**
 * Sessions: a server acting for many users (a backend whose users each connect their own tenant
 * account, a job runner acting for thousands of connections). One session per user or connection,
 * each named by the app's own id on every call; the manager of each made on demand and dropped when
 * idle, so memory stays bounded and the storage stays the truth. The same concept as the Go kit's
 * `tokenmanager.Sessions` and the Python kit's `Sessions` (spec/token-store/README.md, "Sessions").
 *
 * @see RFC 6749 §4.1, §6, §10.12; RFC 9700 §4.7.1 (login CSRF), §4.14.2 (rotation)
 */
import type { Scope } from "@tenant-integration/types";
import { bindingHash, checkBinding, createBinding } from "./binding.js";
import { fail } from "./errors.js";
import { off, on } from "./events.js";
import { closeManager, createManagerState, type ManagerState, scopeKeys, sessionLog } from "./manager-state.js";
import { need } from "./options.js";
import { getAccessToken } from "./refresh.js";
import { revoke } from "./revoke.js";
import { getSession, isSignedIn, onUnauthorized, signOut } from "./session.js";
import { checkSessionId } from "./session-id.js";
import {
  beginAuthorization,
  beginSignIn,
  callbackUrl,
  completeAuthorization,
  exchange,
  takeCallback,
} from "./sign-in.js";
import { listenToTabs } from "./tabs.js";
import { managerOf } from "./token-manager.js";
import type { SessionInfo, TokenManager, TokenManagerOptions } from "./types.js";

/** Options of {@link createSessions}: the manager's (every call names its session), and the cache's bounds. */
export interface SessionsOptions extends TokenManagerOptions {
  /** How many sessions' managers are kept in memory at most (default 1 000); past it the least recently used idle ones are dropped. */
  maxCached?: number;
  /** After how many milliseconds without a call a session's manager is dropped from memory (default 300 000). */
  maxIdleMs?: number;
}

/** What {@link Sessions.beginSignIn} is given. */
export interface BeginSignInOptions {
  /** The session the tokens will be stored under: the app's logged-in user (never from the query string). */
  session: string;
  /**
   * The browser binding: the value of the browser's binding cookie when it has a valid one (so two
   * tabs share it), or the app's own value bound to that browser (its server session's id). Absent:
   * a new one is made (32 random bytes, base64url) and returned, for the app to set as the cookie.
   */
  browser?: string | undefined;
  /** The scopes of this sign-in, in place of the options' `scopes`. */
  scopes?: readonly Scope[];
}

/** What {@link Sessions.beginSignIn} returns. Holds the binding: never log it. */
export interface SignInStart {
  /** The authorize URL to send the browser to. */
  readonly url: string;
  /** When the pending sign-in expires, in `now()` milliseconds. */
  readonly expiresAt: number;
  /** The session the sign-in is for. */
  readonly sessionId: string;
  /** The browser binding the callback must bring: the cookie's value to set (or the app's own value, as given). */
  readonly browser: string;
}

/** What {@link Sessions.completeSignIn} is given beside the callback URL. */
export interface CompleteSignInOptions {
  /** The browser binding the callback's request brought (its binding cookie, or the app's own value). */
  browser?: string | undefined;
  /**
   * The session the app requires the sign-in to be for (its logged-in user): a sign-in begun for
   * another session is refused with `STATE_MISMATCH` before any exchange. Absent: any session's.
   */
  session?: string | undefined;
}

/** What {@link Sessions.completeSignIn} returns: the session signed in, and what the manager tells about it. */
export interface SignedIn extends SessionInfo {
  readonly sessionId: string;
}

/**
 * The sessions of a server: one storage, one session per id the app chooses. Every method names the
 * session; none has a default, so a server cannot hand one user's tokens to another by leaving the
 * id out. A manager from {@link Sessions.manager} has the promises of `createTokenManager`'s for its
 * session: one refresh per expiry across processes, machines and kits sharing the storage; its
 * single flight and its lock are its own, so one session's refresh never waits for another's.
 */
export interface Sessions {
  /**
   * The manager of a session, made on demand (nothing is read until it is used) and cached: ask
   * again for each piece of work rather than keeping it, since an idle one is dropped (asking costs
   * a map lookup). It is an auth strategy for the client package (`sessionClient`).
   *
   * @throws {@link TokenManagerError} `INVALID_SESSION_ID`
   */
  manager(sessionId: string): TokenManager;
  /**
   * Begins a sign-in for a session, bound to the browser that starts it: stores a pending sign-in
   * holding the session id and the binding's SHA-256, and returns the authorize URL and the binding.
   *
   * @throws {@link TokenManagerError} `INVALID_SESSION_ID`, `INVALID_OPTIONS` (scopes), `STORAGE_FAILED`
   * @see RFC 6749 §4.1.1; RFC 7636 §4.3; RFC 9700 §4.7.1
   */
  beginSignIn(options: BeginSignInOptions): Promise<SignInStart>;
  /**
   * Completes the sign-in a callback belongs to, found by its state (taken once, whatever follows):
   * refused before any exchange when it was begun in another browser (its binding missing or
   * different) or, with `session`, for another session; then the code is exchanged and the tokens
   * stored under the session the sign-in was begun for.
   *
   * @throws {@link TokenManagerError} `INVALID_CALLBACK`, `STATE_MISSING`, `NO_PENDING_SIGN_IN`,
   * `STATE_MISMATCH`, `STATE_EXPIRED`, `AUTHORIZATION_DENIED`, `INVALID_SESSION_ID` (for `session`),
   * and the exchange's errors as `completeAuthorization`
   * @see RFC 6749 §4.1.2, §4.1.3, §10.12; RFC 9700 §4.7.1
   */
  completeSignIn(callbackUrl: string | URL, options?: CompleteSignInOptions): Promise<SignedIn>;
  /** Revokes the session's tokens at the tenant, then forgets them (see `TokenManager.revoke`). */
  revoke(sessionId: string): Promise<void>;
  /** Forgets the session's tokens, without a request (see `TokenManager.signOut`). */
  signOut(sessionId: string): Promise<void>;
  /** Whether the session has tokens (see `TokenManager.isSignedIn`). */
  isSignedIn(sessionId: string): Promise<boolean>;
  /** How many sessions' managers are in memory now. */
  readonly cached: number;
  /** The tenant's origin, e.g. `https://acme.tenant.test`: the `baseUrl` of a session's API client. */
  readonly baseUrl: string;
  /** The redirect URI, as given: the public callback URL (the handlers never rebuild it from `Host`). */
  readonly redirectUri: string;
  /** How long a sign-in stays pending, in milliseconds: the binding cookie's lifetime. */
  readonly pendingLifetimeMs: number;
}

/** Options of {@link createSessionManager}: the manager's, and the session's id. */
export interface SessionManagerOptions extends TokenManagerOptions {
  /**
   * The session: the app's own id of its user or connection, 1 to 128 characters from
   * `A-Z a-z 0-9 - . _ ~ @ + = |`. Checked at once: `INVALID_SESSION_ID` otherwise.
   */
  sessionId: string;
}

/**
 * Creates the manager of one session of a storage that many share, without a sessions object (the
 * Python kit's `TokenManager(session_id=…)`, the Go kit's `WithSessionID`): the manager of
 * `createTokenManager`, its records under `tenant-integration:<origin>:<clientId>:<sessionId>:<kind>`
 * with a lock of their own, completing only sign-ins begun for this session. Prefer
 * {@link createSessions} for a server of many users: it caches and drops managers, and binds
 * sign-ins to browsers. Only apps that import this or `createSessions` ship the session id rule.
 *
 * @throws {@link TokenManagerError} `INVALID_SESSION_ID` (before anything else is checked, read or
 * written), and `INVALID_OPTIONS` as `createTokenManager`
 * @example
 * ```ts
 * const tm = createSessionManager({ ...options, storage: fileStorage(path), sessionId: "auth0|64f1c2a9e1b7" });
 * ```
 * @see spec/token-store/README.md, "Sessions"; RFC 6749 §4.1, §6
 */
export function createSessionManager({ sessionId, ...options }: SessionManagerOptions): TokenManager {
  const state = createManagerState(options, checkSessionId(sessionId));
  listenToTabs(state);
  return managerOf(state);
}

/** A cached session: its manager's state, its manager, and how it is used. */
interface Entry {
  readonly state: ManagerState;
  manager: TokenManager;
  /** Calls of the manager under way (other than `getAccessToken`, seen by the state's `inflight`). */
  busy: number;
  /** When it was last asked for, or a call of its manager settled (`Date.now()`). */
  lastUsed: number;
}

/** The state of a sessions object. */
interface SessionsState {
  /** The state every session's is made from: options checked once, one storage, lock and fetch. */
  readonly template: ManagerState;
  readonly options: SessionsOptions;
  /** The cached sessions, the least recently used first. */
  readonly entries: Map<string, Entry>;
  readonly maxCached: number;
  readonly maxIdleMs: number;
  /** The sweep of idle sessions, armed while any is cached. */
  timer: ReturnType<typeof setTimeout> | undefined;
}

/**
 * Creates the sessions of a server acting for many users: one tenant, one OAuth client, one storage
 * (`fileStorage`, `redisStorage`, `redisClusterStorage` for several processes; `memoryStorage` for
 * one), one session per id. Managers are made on demand and dropped when idle for `maxIdleMs`, or
 * the least recently used past `maxCached`: never one with a call or a refresh under way, nor one
 * holding tokens whose write failed (it writes them first, and is dropped at a later sweep).
 *
 * @throws {@link TokenManagerError} `INVALID_OPTIONS` for an invalid option (as `createTokenManager`,
 * and `sessionId`, `maxCached`, `maxIdleMs`)
 * @example
 * ```ts
 * const sessions = createSessions({
 *   baseUrl: "https://acme.tenant.test",
 *   clientId: "demo-integration",
 *   redirectUri: "https://app.example.org/tenant/callback",
 *   scopes: ["profile:read"],
 *   storage: redisStorage(redis),
 * });
 * const { url, browser } = await sessions.beginSignIn({ session: user.id, browser: cookie });
 * // at the callback:
 * const { sessionId } = await sessions.completeSignIn(request.url, { browser: cookie, session: user.id });
 * const token = await sessions.manager(user.id).getAccessToken();
 * ```
 * @see RFC 6749 §4.1, §6; RFC 9700 §4.7.1, §4.14.2
 */
export function createSessions(options: SessionsOptions): Sessions {
  const { maxCached = 1000, maxIdleMs = 300_000 } = options;
  need(!("sessionId" in options), "sessionId: a sessions object takes the session id on every call");
  need(Number.isInteger(maxCached) && maxCached >= 1, "maxCached: a whole number, at least 1");
  need(Number.isFinite(maxIdleMs) && maxIdleMs > 0, "maxIdleMs: a positive number of milliseconds");
  const s: SessionsState = {
    template: createManagerState(options),
    options,
    entries: new Map(),
    maxCached,
    maxIdleMs,
    timer: undefined,
  };
  return {
    manager: (id) => entryOf(s, checkSessionId(id)).manager,
    beginSignIn: (o) => beginSessionSignIn(s, o),
    completeSignIn: (url, o) => completeSessionSignIn(s, url, o),
    revoke: async (id) => entryOf(s, checkSessionId(id)).manager.revoke(),
    signOut: async (id) => entryOf(s, checkSessionId(id)).manager.signOut(),
    isSignedIn: async (id) => entryOf(s, checkSessionId(id)).manager.isSignedIn(),
    get cached() {
      return s.entries.size;
    },
    baseUrl: s.template.base,
    redirectUri: s.template.redirectUri,
    pendingLifetimeMs: s.template.pendingLifetimeMs,
  };
}

/** The state of a session's manager: the template's settings, the session's names, log and lock wait, and nothing else shared. */
function sessionState(s: SessionsState, sessionId: string): ManagerState {
  const { template } = s;
  return {
    ...template,
    sessionId,
    keys: scopeKeys(new URL(template.base).origin, template.clientId, sessionId),
    log: sessionLog(s.options.logger, sessionId),
    // A server's sessions have no tabs to tell.
    channel: undefined,
    listeners: {},
    intentWatch: undefined,
    current: undefined,
    rejected: undefined,
    unsaved: undefined,
    retryWriteAfter: 0,
    inflight: undefined,
    foreignIntent: undefined,
    ownIntent: undefined,
    generation: 0,
  };
}

/** Makes the cached entry of a session: its state, and its manager ({@link sessionManager}). */
function newEntry(s: SessionsState, sessionId: string): Entry {
  const entry: Entry = { state: sessionState(s, sessionId), manager: undefined!, busy: 0, lastUsed: Date.now() };
  entry.manager = sessionManager(entry);
  return entry;
}

/**
 * The manager of a cached session: `managerOf`'s methods, its calls other than `getAccessToken`
 * (whose refresh under way is the state's `inflight`) counted in `entry.busy` until they settle, so
 * that the session is not dropped meanwhile. Closures over the entry and nothing else: a server
 * caches thousands of managers.
 */
function sessionManager(entry: Entry): TokenManager {
  const { state } = entry;
  return {
    beginAuthorization: (options) => counted(entry, () => beginAuthorization(state, options)),
    completeAuthorization: (url) => counted(entry, () => completeAuthorization(state, url)),
    getAccessToken: () => getAccessToken(state),
    onUnauthorized: (rejected) => onUnauthorized(state, rejected),
    revoke: () => counted(entry, () => revoke(state)),
    signOut: () => counted(entry, () => signOut(state)),
    isSignedIn: () => counted(entry, () => isSignedIn(state)),
    getSession: () => counted(entry, () => getSession(state)),
    on: (event, listener) => on(state, event, listener),
    off: (event, listener) => off(state, event, listener),
    close: () => closeManager(state),
  };
}

/** Runs `call` of a session's manager, counted as under way until it settles: the manager is not dropped meanwhile. */
async function counted<R>(entry: Entry, call: () => Promise<R>): Promise<R> {
  entry.busy++;
  try {
    return await call();
  } finally {
    entry.busy--;
    entry.lastUsed = Date.now();
  }
}

/** The cached entry of a valid session id, made when there is none, and marked the most recently used. */
function entryOf(s: SessionsState, sessionId: string): Entry {
  let entry = s.entries.get(sessionId);
  if (entry) s.entries.delete(sessionId);
  else entry = newEntry(s, sessionId);
  entry.lastUsed = Date.now();
  s.entries.set(sessionId, entry);
  if (s.entries.size > s.maxCached) dropPastMaxCached(s);
  arm(s, s.maxIdleMs);
  return entry;
}

/** Whether a session's manager may be dropped: no call or refresh under way, no tokens whose write failed. */
const droppable = (entry: Entry): boolean => entry.busy === 0 && !entry.state.inflight && !entry.state.unsaved;

/** Drops the least recently used droppable sessions while more than `maxCached` are cached. */
function dropPastMaxCached(s: SessionsState): void {
  for (const [id, entry] of s.entries) {
    if (s.entries.size <= s.maxCached) return;
    if (droppable(entry)) s.entries.delete(id);
  }
}

/** Arms the sweep of idle sessions in `delayMs`, unless it is armed; it never keeps a process alive. */
function arm(s: SessionsState, delayMs: number): void {
  if (s.timer || !s.entries.size) return;
  s.timer = setTimeout(() => sweep(s), Math.max(delayMs, 10));
  (s.timer as { unref?(): void }).unref?.();
}

/**
 * Drops every droppable session idle for `maxIdleMs`. One idle with tokens whose write failed is
 * made to write them (a call of `getAccessToken`, which writes them first) and dropped at a later
 * sweep, once written; one with a call under way is looked at again a second later.
 */
function sweep(s: SessionsState): void {
  s.timer = undefined;
  const now = Date.now();
  let next = s.maxIdleMs;
  for (const [id, entry] of s.entries) {
    const idle = now - entry.lastUsed;
    if (idle < s.maxIdleMs) next = Math.min(next, s.maxIdleMs - idle);
    else if (droppable(entry)) s.entries.delete(id);
    else {
      next = Math.min(next, 1000);
      if (entry.busy === 0 && !entry.state.inflight) writeUnsaved(entry.state);
    }
  }
  arm(s, next);
}

/**
 * Has a manager write its unwritten tokens now: `getAccessToken` writes them first, under the lock,
 * and its pause between retries of the write (a second) is waived, the sweep being at most once a
 * second. Its failure is reported as the manager's (`storage-failed`); the session stays cached.
 */
function writeUnsaved(state: ManagerState): void {
  state.retryWriteAfter = 0;
  getAccessToken(state).catch(() => {});
}

/** {@link Sessions.beginSignIn}. */
async function beginSessionSignIn(s: SessionsState, options: BeginSignInOptions): Promise<SignInStart> {
  const sessionId = checkSessionId(options?.session);
  const browser = options.browser || createBinding(s.template.random);
  const request = await beginSignIn(s.template, {
    scopes: options.scopes,
    sessionId,
    browser: await bindingHash(browser),
  });
  return { url: request.url, expiresAt: request.expiresAt, sessionId, browser };
}

/** {@link Sessions.completeSignIn}. */
async function completeSessionSignIn(
  s: SessionsState,
  url: string | URL,
  { browser, session }: CompleteSignInOptions = {},
): Promise<SignedIn> {
  const required = session === undefined ? undefined : checkSessionId(session);
  const checked = await takeCallback(s.template, callbackUrl(url), {
    binding: (recorded) => checkBinding(recorded, browser),
    accepts: (id) => id !== undefined && (required === undefined || id === required),
  });
  const sessionId = checked.sessionId ?? fail("STATE_MISMATCH", "the sign-in was started for another session");
  const entry = entryOf(s, sessionId);
  return counted(entry, async () => ({ sessionId, ...(await exchange(entry.state, checked)) }));
}
