/**
 * The token manager's public shapes: its options, what it tells about a session, its events and its
 * methods. Implemented by `createTokenManager` (token-manager.ts) over the modules beside it.
 *
 * @see RFC 6749 §4.1, §5.1, §6; RFC 7636; RFC 7009
 */
import type { Scope } from "@tenant-integration/types";
import type { RandomSource } from "./encoding.js";
import type { SessionEndedError, TokenManagerError } from "./errors.js";
import type { FetchLike } from "./fetch.js";
import type { Lock } from "./lock.js";
import type { logSessionTo, SessionLogger } from "./logger.js";
import type { RefreshIntents } from "./refresh-intent.js";
import type { memoryStorage } from "./storage/memory.js";
import type { TokenStorage } from "./storage/storage.js";

/** Options of `createTokenManager`. Only the first four are required. */
export interface TokenManagerOptions {
  /** The tenant's origin, e.g. `https://acme.tenant.test`: https, or http to a loopback address only; no path (the manager adds `/oauth/…`). */
  baseUrl: string | URL;
  /** The OAuth client identifier. */
  clientId: string;
  /** The redirect URI registered for the client, exactly as registered. */
  redirectUri: string | URL;
  /** The scopes to request (at least one). */
  scopes: readonly Scope[];
  /** Where the tokens live (default {@link memoryStorage}). */
  storage?: TokenStorage;
  /**
   * Where the pending sign-in (state and verifier) lives. Default: the storage's own `tabStorage`
   * when it has one (`webStorage(localStorage)` has `webStorage(sessionStorage)`: each tab keeps its
   * own, so tabs signing in at once do not take each other's), else `storage`.
   */
  pendingStorage?: TokenStorage;
  /** Refresh when the access token expires within this many milliseconds (default 60 000, at most half the lifetime). */
  refreshLeewayMs?: number;
  /** How long a pending sign-in stays valid, in milliseconds (default 600 000). */
  pendingLifetimeMs?: number;
  /** The `fetch` to use (default: the global `fetch`, looked up at call time): any `typeof fetch`, or a sandbox's `sandbox.fetch`. */
  fetch?: FetchLike;
  /** The clock, in milliseconds since the epoch (default `Date.now`). */
  now?: () => number;
  /** A `crypto.getRandomValues`-shaped random source (default WebCrypto). */
  random?: RandomSource;
  /**
   * The lock around a refresh (default: the storage's own `lock`, else Web Locks when `navigator.locks`
   * exists, else an in-process lock). A lock of your own is one that processes share: it needs the
   * refresh intents, from the storage (`TokenStorage.refreshIntents`) or the `refreshIntents` option,
   * else `INVALID_OPTIONS`.
   */
  lock?: Lock;
  /**
   * The refresh intents (`import { refreshIntents } from "@tenant-integration/token-manager"`), for a
   * `lock` of your own beside a storage that does not carry them (see `TokenStorage.refreshIntents`):
   * a lock that processes share is refused without them (`INVALID_OPTIONS`).
   */
  refreshIntents?: RefreshIntents;
  /** The bounded wait for the Web Lock before it is stolen, in milliseconds (default 20 000). */
  lockTimeoutMs?: number;
  /**
   * The timeout of each request, in milliseconds of time this process ran (default 10 000): a process
   * that was stopped (SIGSTOP, a suspended laptop) reads the answer that arrived meanwhile before its
   * timeout counts on.
   */
  requestTimeoutMs?: number;
  /**
   * Retries of a refresh whose request never reached the tenant (no connection could be made) or was
   * answered 503 or 429, taken as refused unprocessed (for 429 by the kit's assumption: RFC 6585 §4
   * does not say; the README's "Paused processes and retries" gives the reasoning): total attempts
   * (default 3) and first delay (default 300 ms, doubled each time). A failure after the request may
   * have reached the tenant (a timeout, a connection lost, any other 5xx) is never retried: the
   * tenant may have rotated the refresh token.
   */
  retry?: { attempts?: number; baseDelayMs?: number };
  /**
   * With a storage that processes share (one with a `lock`, or the `lock` option): how long a process
   * that finds another's refresh intent on the refresh token it would present waits for that refresh
   * to be stored before presenting the token itself, in milliseconds (default 20 000; the README,
   * "Paused processes", says what happens after it).
   */
  intentWaitMs?: number;
  /**
   * Where log lines go (default: none): a logger made by {@link logSessionTo}, e.g.
   * `logSessionTo(console, "info")`; no line carries a token, code, verifier, state, header value or
   * body. The logging code is imported only through `logSessionTo`.
   */
  logger?: SessionLogger;
}

/** What the manager tells about a session, without any token. */
export interface SessionInfo {
  /** When the access token expires, in `now()` milliseconds (local receive time + `expires_in`). */
  readonly expiresAt: number;
  /** The granted scopes, when the server returned them. */
  readonly scope?: string | undefined;
}

/** Options of one sign-in ({@link TokenManager.beginAuthorization}). */
export interface AuthorizationOptions {
  /**
   * The scopes to ask for in this sign-in instead of the options' `scopes`: e.g. after a 403 that
   * names a scope the session lacks. At least one, each a scope name of the contract.
   */
  scopes?: readonly Scope[];
}

/** The result of {@link TokenManager.beginAuthorization}. */
export interface AuthorizationRequest {
  /** The authorize URL to send the browser to. */
  readonly url: string;
  /** When the pending sign-in expires, in `now()` milliseconds. */
  readonly expiresAt: number;
}

/**
 * The events and their payloads. `signed-in`, `signed-out` and `session-ended` also reach the managers
 * of the other tabs when the storage is shared by the tabs (it has a `tabStorage`, as
 * `webStorage(localStorage)` has), over a `BroadcastChannel`; `otherTab` tells where it happened. A
 * manager told of another tab's sign-in or sign-out forgets the tokens it held in memory, so it never
 * hands out the old session's access token again.
 */
export interface TokenManagerEvents {
  /** New tokens were obtained with the refresh token, and persisted. */
  "tokens-refreshed": SessionInfo;
  /** `completeAuthorization` stored a new session, in this tab or another one. */
  "signed-in": SessionInfo & { readonly otherTab: boolean };
  /** `signOut()` or `revoke()` cleared the tokens, in this tab or another one; `revoked` tells which. */
  "signed-out": { readonly revoked: boolean; readonly otherTab: boolean };
  /** The refresh token was refused with `invalid_grant`; the tokens were cleared (by this tab or another one). */
  "session-ended": { readonly error: SessionEndedError; readonly otherTab: boolean };
  /** `revoke()` succeeded and the tokens were cleared (then `signed-out` follows). */
  revoked: undefined;
  /**
   * New tokens (from a refresh, or a retried write) could not be written to the storage. They stay
   * usable in this process and their write is retried on a later `getAccessToken`, at most once a
   * second. Also fired when the stored tokens were found unreadable (a corrupt token file, moved
   * aside; a value that is not a token record): no session, said out loud, whichever method read
   * them. `error` is the `STORAGE_FAILED` error; its message says what happened, and its `cause`
   * names the file and the fault (for a corrupt file, where it was moved).
   */
  "storage-failed": { readonly error: TokenManagerError };
}

/** A listener of the event `E`. */
export type Listener<E extends keyof TokenManagerEvents> = (payload: TokenManagerEvents[E]) => void;

/**
 * The token manager. Its `getAccessToken` and `onUnauthorized` make it an token source for the
 * client package.
 */
export interface TokenManager {
  /**
   * Creates a PKCE pair and a state, stores them as a pending sign-in of its own (found at the
   * callback by its state, so two tabs or a double click both complete; it expires after
   * `pendingLifetimeMs`), and returns the authorize URL with its seven parameters. `scopes` asks for
   * other scopes than the options' in this sign-in.
   *
   * @throws {@link TokenManagerError} `INVALID_OPTIONS` when `scopes` is empty or names a scope the
   * contract does not have (nothing stored); `STORAGE_FAILED` when the pending sign-in cannot be stored.
   * @example
   * ```ts
   * location.assign((await tm.beginAuthorization({ scopes: ["profile:read", "tickets:write"] })).url);
   * ```
   * @see RFC 6749 §4.1.1, §3.3; RFC 7636 §4.3
   */
  beginAuthorization(options?: AuthorizationOptions): Promise<AuthorizationRequest>;
  /**
   * Takes the pending sign-in of the callback's `state` (single use), checks that the callback is at
   * the redirect URI (scheme, host, port and path) and repeats none of `state`, `code`, `error`,
   * checks its `state` in constant time and that the sign-in was begun for this manager's session,
   * then exchanges the `code` at `POST /oauth/token` and stores the tokens.
   *
   * A `callbackUrl` that is not an absolute URL (`location.search` passed for `location.href`) is
   * refused before the pending sign-in is taken, so the whole URL can follow.
   *
   * @throws {@link TokenManagerError} (`NO_PENDING_SIGN_IN`, `STATE_MISSING`, `STATE_MISMATCH`,
   * `STATE_EXPIRED`, `INVALID_CALLBACK`, `AUTHORIZATION_DENIED`) with no request sent;
   * {@link OAuthResponseError}, {@link TransientError}, {@link TokenManagerError} (`INVALID_RESPONSE`,
   * `STORAGE_FAILED`). A `STORAGE_FAILED` after the exchange keeps the tokens: they are usable in
   * this process, and written again on the next `getAccessToken`.
   * @see RFC 6749 §3.1.2, §4.1.2, §4.1.3, §10.12; RFC 7636 §4.5; RFC 9700 §4.4 (mix-up)
   */
  completeAuthorization(callbackUrl: string | URL): Promise<SessionInfo>;
  /**
   * Returns a valid access token, refreshing it (once, however many callers) when it is within the
   * leeway of expiry or was marked unusable by {@link TokenManager.onUnauthorized}. New tokens whose
   * write fails are handed out all the same (the tenant has rotated the refresh token) and reported
   * with the `storage-failed` event; the write is retried on a later call, at most once a second, and
   * while they are fresh they are handed out even when that retry cannot run (the storage or its lock
   * unreachable). No refresh is made from such tokens until they are written: once they need one and
   * their write fails again, the call rejects at once with `STORAGE_FAILED` (nothing sent, lock released).
   * While the token stays fresh (checked on every call), every call returns the same resolved promise.
   *
   * @throws {@link TokenManagerError} (`NOT_SIGNED_IN`, with the storage's reason as `cause` when its
   * data was unreadable and set aside; `INVALID_RESPONSE`; `STORAGE_FAILED` when reading fails, or when
   * unwritten tokens need a refresh and still cannot be written),
   * {@link SessionEndedError}, {@link TransientError}, {@link OAuthResponseError}, and what the lock
   * throws (`FileStorageError` `LOCK_TIMEOUT` for `fileStorage`'s).
   * @see RFC 6749 §6
   */
  getAccessToken(): Promise<string>;
  /**
   * Marks the current access token unusable when it equals `rejectedToken` (an API answered 401), so
   * the next {@link TokenManager.getAccessToken} refreshes. Concurrent 401s cause one refresh.
   *
   * @see RFC 6750 §3.1
   */
  onUnauthorized(rejectedToken: string): void;
  /**
   * Revokes the current access token at `POST /oauth/revoke` (form body, RFC 7009), then clears the
   * tokens and fires `revoked`. Without tokens it only clears. On failure the tokens are kept.
   *
   * @throws {@link OAuthResponseError}, {@link TransientError}, {@link TokenManagerError} (`INVALID_RESPONSE`, `STORAGE_FAILED`).
   * @see RFC 7009 §2.1
   */
  revoke(): Promise<void>;
  /**
   * Forgets the tokens locally, without a request, and fires `signed-out` (here and in the other tabs).
   *
   * @throws {@link TokenManagerError} `STORAGE_FAILED`
   */
  signOut(): Promise<void>;
  /**
   * Stops the manager's background work: the beats of its refresh intent (which say to other
   * processes that its refresh is under way) and the retried write of tokens whose write failed.
   * The intent stays stored: the others give it up once they have watched it for `intentWaitMs`
   * without a beat. Call it once the manager's calls are done; it sends nothing and keeps the tokens.
   * `signOut()` stops the beats too.
   */
  close(): void;
  /**
   * Whether there is a session: tokens in the storage (or, after a failed write, in this process),
   * whether or not the access token has expired (the refresh token carries the session). Sends no
   * request: a session the tenant has ended meanwhile still counts until a refresh is refused.
   * Stored tokens found unreadable (a corrupt token file, moved aside) are no session, reported by
   * `storage-failed` and a warning in the log.
   *
   * @throws {@link TokenManagerError} `STORAGE_FAILED` when the storage cannot be read.
   * @example
   * ```ts
   * if (!(await tm.isSignedIn())) showSignInButton();
   * ```
   * @see RFC 6749 §1.5 (the refresh token outlives the access token)
   */
  isSignedIn(): Promise<boolean>;
  /**
   * The session as {@link TokenManager.isSignedIn} finds it: when its access token expires and the
   * granted scope, never a token; `undefined` when there is none. Sends no request.
   *
   * @throws {@link TokenManagerError} `STORAGE_FAILED` when the storage cannot be read.
   * @example
   * ```ts
   * const session = await tm.getSession();
   * if (session && !session.scope?.split(" ").includes("tickets:write")) await tm.beginAuthorization({ scopes: ["tickets:write"] });
   * ```
   * @see RFC 6749 §3.3, §5.1 (scope, expires_in)
   */
  getSession(): Promise<SessionInfo | undefined>;
  /** Subscribes to an event; returns the unsubscribe function. */
  on<E extends keyof TokenManagerEvents>(event: E, listener: Listener<E>): () => void;
  /** Unsubscribes a listener. */
  off<E extends keyof TokenManagerEvents>(event: E, listener: Listener<E>): void;
}
