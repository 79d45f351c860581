/**
 * The token manager: PKCE sign-in, rotation-safe refresh, revocation and sign-out, on `fetch` and
 * WebCrypto only.
 *
 * @see RFC 6749 §4.1, §5.1, §5.2, §6, §10.12; RFC 7636; RFC 7009 §2.1; OAuth 2.0 Security BCP (RFC 9700)
 */
import { scopes as SCOPES, type Scope } from "@tenant-integration/types";
import { isString, type RandomSource } from "./encoding.js";
import { describe, fail, type OAuthErrorFields, OAuthResponseError, SessionEndedError, TokenManagerError, TransientError } from "./errors.js";
import type { FetchLike } from "./fetch.js";
import type { SessionLogger } from "./logger.js";
import { processLock, webLock, type HeldLock, type Lock, type LockManagerLike } from "./lock.js";
import { callbackTarget, need, parseUrl, redirectTarget, tenantBase } from "./options.js";
import { createPkcePair } from "./pkce.js";
import { parseRetryAfter } from "./retry-after.js";
import { sanitize, scrub } from "./redact.js";
import { constantTimeEqual, createState } from "./state.js";
import { memoryStorage } from "./storage/memory.js";
import type { TokenStorage } from "./storage/storage.js";
import { parseJson, parseOAuthError, parseTokenResponse } from "./token-response.js";

/** Options of {@link createTokenManager}. Only the first four are required. */
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
  /** The lock around a refresh (default: the storage's own `lock`, else Web Locks when `navigator.locks` exists, else an in-process lock). */
  lock?: Lock;
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
   * second. `error` is the
   * `STORAGE_FAILED` error, whose `cause` names the file and the fault.
   */
  "storage-failed": { readonly error: TokenManagerError };
}

/** A listener of the event `E`. */
export type Listener<E extends keyof TokenManagerEvents> = (payload: TokenManagerEvents[E]) => void;

/**
 * The token manager. Its `getAccessToken` and `onUnauthorized` make it an auth strategy for the
 * client package.
 */
export interface TokenManager {
  /**
   * Creates a PKCE pair and a state, stores them as the one pending sign-in (replacing any earlier
   * one), and returns the authorize URL with its seven parameters. `scopes` asks for other scopes
   * than the options' in this sign-in.
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
   * Takes the pending sign-in (single use), checks that the callback is at the redirect URI (scheme,
   * host, port and path) and repeats none of `state`, `code`, `error`, checks its `state` in constant
   * time, then exchanges the `code` at `POST /oauth/token` and stores the tokens.
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
   * Whether there is a session: tokens in the storage (or, after a failed write, in this process),
   * whether or not the access token has expired (the refresh token carries the session). Sends no
   * request: a session the tenant has ended meanwhile still counts until a refresh is refused.
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

/**
 * The stored record, in the token response's own field names, plus the local receive time and an id.
 * Records stay inside the manager's closure: no method, event or error returns or carries one (the
 * manager hands out the access token string alone, and copies what it tells into new objects).
 */
/**
 * The refresh intent, stored at `<prefix>intent` right before a refresh request leaves and deleted
 * once its outcome is stored: which refresh token (a SHA-256 fingerprint, never the token), which
 * refresh (a random id), since when, and, where known, the holder's pid and host. The format is
 * spec/token-store/intent-record.schema.json.
 */
interface Intent {
  readonly fingerprint: string;
  readonly holder: string;
  readonly since: number;
  readonly pid?: number;
  readonly host?: string;
}

/** Thrown inside the lock when it was found no longer held right before a refresh would leave: nothing was sent; the lock is taken again. */
class LockLost extends Error {}

/** Thrown inside the lock when another refresh's live intent names the token: the lock is released, the intent waited for, and the lock taken again. */
class IntentPending extends Error {
  constructor(
    readonly intent: Intent,
    readonly recordId: string,
  ) {
    super("refresh intent pending");
  }
}

/** The lowercase hex SHA-256 of a refresh token: names it in the intent without revealing it. */
const fingerprint = async (token: string): Promise<string> =>
  Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token))), (b) => b.toString(16).padStart(2, "0")).join("");

/** Error codes of a connection that was never made: the request did not leave this machine. */
const NOT_SENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ENETUNREACH", "EHOSTUNREACH", "UND_ERR_CONNECT_TIMEOUT"]);
/** Whether a fetch failure says (in it or its causes) that no connection was made. */
const neverSent = (e: unknown): boolean => {
  for (let c = e as { code?: unknown; cause?: unknown } | undefined, depth = 0; c && depth < 5; c = c.cause as typeof c, depth++) {
    if (typeof c.code === "string" && NOT_SENT.has(c.code)) return true;
  }
  return false;
};

/**
 * Aborts `controller` after `ms` milliseconds of time this process ran. A tick that comes far later
 * than asked means the process was stopped (SIGSTOP, a suspended machine, a debugger): that time is
 * not the tenant's, and the tick only re-arms, so that an answer that arrived meanwhile is read
 * before the timeout counts on.
 */
const runningTimeout = (controller: AbortController, ms: number): (() => void) => {
  const step = Math.min(ms, 250);
  let ran = 0;
  let last = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = (delay: number) => ((timer = setTimeout(tick, delay)) as { unref?(): void }).unref?.();
  const tick = () => {
    const at = performance.now();
    const gap = at - last;
    last = at;
    if (gap > step + 1_000) return arm(step);
    ran += gap;
    if (ran >= ms) controller.abort(new DOMException("The request timed out.", "TimeoutError"));
    else arm(Math.min(step, ms - ran));
  };
  arm(step);
  return () => clearTimeout(timer);
};

interface TokenRecord {
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
   * of the processes that wrote them. Absent in records written before they existed.
   */
  readonly session?: string | undefined;
  readonly seq?: number | undefined;
}

/** Tokens, codes and verifiers to scrub from errors; `undefined` where there is none (skipped). */
type Secrets = (string | undefined)[];

/**
 * Checks scopes against the contract's scope names (each an RFC 6749 §3.3 scope-token, so none holds
 * a space): at least one, every one known.
 */
const checkScopes = (scopes: unknown): readonly Scope[] => {
  need(Array.isArray(scopes) && scopes.length, "scopes: at least one scope");
  const unknown = (scopes as unknown[]).find((s) => !SCOPES.includes(s as Scope));
  if (unknown !== undefined) fail("INVALID_OPTIONS", `scopes: ${JSON.stringify(String(unknown))} is not a scope of the service`);
  return scopes as readonly Scope[];
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/**
 * After a failed write of new tokens, how long they are handed out from memory before the write is
 * tried (and a failure reported) again: a storage that is down costs one attempt and one
 * `storage-failed` a second, not one per call.
 */
const UNSAVED_RETRY_MS = 1000;
/** The longest wait before a refresh is sent again: the backoff's cap, and the longest Retry-After waited. */
const MAX_RETRY_DELAY_MS = 10_000;
let sharedLock: Lock | undefined;

/**
 * Creates a token manager for one tenant and one OAuth client.
 *
 * @throws {@link TokenManagerError} with code `INVALID_OPTIONS` when `baseUrl` is not the tenant's
 * origin over https (or http to loopback), its message saying why, or another option is invalid.
 * @example
 * ```ts
 * const tm = createTokenManager({
 *   baseUrl: "https://acme.tenant.test",
 *   clientId: "demo-integration",
 *   redirectUri: "https://app.example.org/callback",
 *   scopes: ["profile:read"],
 *   storage: webStorage(localStorage),
 *   pendingStorage: webStorage(sessionStorage),
 * });
 * location.assign((await tm.beginAuthorization()).url);
 * // on the callback page:
 * await tm.completeAuthorization(location.href);
 * const token = await tm.getAccessToken();
 * ```
 * @see RFC 6749 §4.1, §6; RFC 7636; RFC 7009; RFC 9700
 */
export function createTokenManager(options: TokenManagerOptions): TokenManager {
  const {
    clientId,
    scopes,
    storage = memoryStorage(),
    pendingStorage = storage.tabStorage ?? storage,
    now = Date.now,
    random,
    refreshLeewayMs = 60_000,
    retry: { attempts = 3, baseDelayMs = 300 } = {},
    intentWaitMs = 20_000,
  } = options;
  const base = tenantBase(options.baseUrl);
  const redirectUri = String(options.redirectUri);
  const redirectTo = redirectTarget(redirectUri);
  const log = options.logger;
  // The options of earlier versions (`logger: console, logLevel`) say what to pass now.
  need(log === undefined || typeof log === "function", "logger: pass logSessionTo(logger, level)");
  need(!("logLevel" in options), "logLevel: pass logSessionTo(logger, level) as the logger");
  need(isString(clientId) && clientId, "clientId");
  checkScopes(scopes);
  // The lock option wins, then the storage's own lock (file, Redis). With either, no Web Locks:
  // neither the refresh lock nor the rotation markers.
  const ownLock = options.lock ?? storage.lock;
  const locks = ownLock ? undefined : (globalThis as { navigator?: { locks?: LockManagerLike } }).navigator?.locks;
  const lock = ownLock ?? (locks ? webLock(locks, options.lockTimeoutMs) : (sharedLock ??= processLock()));
  // Storage keys and the lock names are scoped by tenant origin and client.
  const key = "tenant-integration:" + new URL(base).origin + ":" + clientId + ":";
  /** Takes, if free, the marker lock saying that record `t` was rotated away (named by its id). */
  const mark = <T>(t: TokenRecord, task: (lock?: unknown) => T) => locks!.request(key + "rotated:" + t.id, { ifAvailable: true }, task);
  const TOKENS = key + "tokens";
  const PENDING = key + "pending";
  const INTENT = key + "intent";
  // Refresh intents only where processes share the storage through a lock of their own (file,
  // Redis, a lock given): tabs coordinate through Web Locks and their rotation markers.
  const intents = ownLock !== undefined;
  const identity = storage.processIdentity;
  // With a storage the tabs share, the tabs tell each other of sign-ins and sign-outs. Only then: an
  // open channel keeps Node, Deno and Bun processes alive (unref'd where that exists).
  const channel =
    storage.tabStorage && typeof BroadcastChannel === "function" ? new BroadcastChannel(key + "events") : undefined;
  (channel as { unref?(): void } | undefined)?.unref?.();

  let current: TokenRecord | undefined;
  // The access token an API refused (onUnauthorized): not handed out again.
  let rejected: string | undefined;
  // Tokens whose write failed: usable in this process, and written again on the next call.
  let unsaved: TokenRecord | undefined;
  // Until when (in `now()` ms) unsaved tokens are served without trying their write again.
  let retryWriteAfter = 0;
  let inflight: Promise<string> | undefined;
  // The intent this manager stored and has not yet cleared (its refresh's tokens are not stored yet).
  let ownIntent: Intent | undefined;
  // Failures (by identity) of requests that never left: the only network failures a refresh retries.
  const unsent = new WeakSet<object>();
  // Bumped by sign-in and sign-out, so that a refresh begun before cannot resurrect or overwrite tokens.
  let generation = 0;
  const listeners: Record<string, Set<(payload: never) => void> | undefined> = {};

  /** Every token, code and verifier in play, for scrubbing. */
  const known = (...extra: string[]): Secrets => [
    ...extra,
    current?.access_token,
    current?.refresh_token,
    unsaved?.access_token,
    unsaved?.refresh_token,
  ];

  const emit = <E extends keyof TokenManagerEvents>(event: E, payload?: TokenManagerEvents[E]): void => {
    for (const listener of [...(listeners[event] ?? [])] as Listener<E>[]) {
      try {
        listener(payload as TokenManagerEvents[E]);
      } catch {
        // A listener's failure is its own: the manager's state is already settled.
      }
    }
  };

  /** What the tabs tell each other: the event and what its payload is made from, never a token. */
  type TabMessage =
    | { event: "signed-in"; session: SessionInfo }
    | { event: "signed-out"; revoked: boolean }
    | { event: "session-ended"; status: number; fields: OAuthErrorFields };

  /** Fires a sign-in, sign-out or session end here, and tells the other tabs. */
  const announce = (message: TabMessage, error?: SessionEndedError): void => {
    try {
      channel?.postMessage(message);
    } catch {
      // A closed channel (the page is being unloaded): the other tabs learn it from storage.
    }
    happened(message, false, error);
  };

  const happened = (message: TabMessage, otherTab: boolean, error?: SessionEndedError): void => {
    if (message.event === "signed-in") emit("signed-in", { ...message.session, otherTab });
    else if (message.event === "signed-out") emit("signed-out", { revoked: message.revoked, otherTab });
    else emit("session-ended", { error: error ?? new SessionEndedError(message.status, message.fields), otherTab });
  };

  if (channel)
    channel.onmessage = ({ data }: MessageEvent<TabMessage>) => {
      // The session this tab held in memory is over: forget it (and let no refresh begun before
      // commit), so the next getAccessToken reads what the other tab stored.
      generation++;
      current = unsaved = rejected = undefined;
      happened(data, true);
    };

  const store = async <T>(op: () => Promise<T>, ...secrets: string[]): Promise<T> => {
    try {
      return await op();
    } catch (e) {
      return fail("STORAGE_FAILED", "", sanitize(e, known(...secrets)));
    }
  };

  /** One POST to the tenant; returns the text of a 2xx and classifies everything else. */
  const post = async (path: string, body: string, type: string, secrets: Secrets, attempt = 1): Promise<string> => {
    let response: Response;
    let text: string;
    const started = performance.now();
    const controller = new AbortController();
    const stopTimer = runningTimeout(controller, options.requestTimeoutMs ?? 10_000);
    /** The one line per request: with its status, or no answer. */
    const logRequest = (status?: number) =>
      log?.(status ? "answered" : "no-answer", { method: "POST", path, status, durationMs: Math.round(performance.now() - started), attempt });
    try {
      // The global fetch is looked up at call time, and called without a receiver.
      response = await (options.fetch ?? fetch)(base + path, {
        method: "POST",
        headers: { Accept: "application/json", "Content-Type": type },
        body,
        // The token must never follow a redirect to another origin.
        redirect: "manual",
        signal: controller.signal,
      });
      text = await response.text();
    } catch (e) {
      logRequest();
      const error = new TransientError(undefined, attempt, sanitize(e, secrets));
      if (neverSent(e)) unsent.add(error);
      throw error;
    } finally {
      stopTimer();
    }
    const { status } = response;
    logRequest(status);
    if (response.ok) return text;
    if (status === 429 || status >= 500) {
      const retryAfterMs = status === 429 || status === 503 ? parseRetryAfter(response.headers.get("retry-after"), now()) : undefined;
      throw new TransientError(status, attempt, undefined, retryAfterMs);
    }
    const fields = status >= 400 ? parseOAuthError(text) : undefined;
    if (!fields) return fail("INVALID_RESPONSE", "HTTP " + status);
    // A server may echo what it was sent; the error must not carry it.
    const scrubbed: Record<string, string> = {};
    for (const [name, value] of Object.entries(fields)) scrubbed[name] = scrub(value, secrets);
    throw new OAuthResponseError(status, scrubbed as unknown as OAuthErrorFields);
  };

  /** The token request; `from` is the record a refresh starts from (none for the code exchange). */
  const tokenRequest = async (body: Record<string, string>, secrets: Secrets, from?: TokenRecord, attempt?: number): Promise<TokenRecord> => {
    const text = await post("/oauth/token", JSON.stringify(body), "application/json", secrets, attempt);
    // Expiry counts from the local receive time, so a skewed server clock does not matter.
    const receivedAt = now();
    // A refresh that did not rotate keeps the refresh token it was made with.
    const parsed = parseTokenResponse(text, from?.refresh_token);
    const id = createState();
    const lineage = from ? { session: from.session ?? from.id, seq: (from.seq ?? 0) + 1 } : { session: id, seq: 0 };
    return { ...parsed, received_at: receivedAt, id, ...lineage };
  };

  /**
   * Whether the stored record supersedes `ours`, whose write failed: it is ours (the write went
   * through after all), or a later record of the same session (another process refreshed from
   * ours), whatever the clocks say. A record of another session supersedes a refresh of ours
   * (storage has moved on since ours was read); between two sign-ins, both valid, the later wins.
   */
  const supersedes = (stored: TokenRecord, ours: TokenRecord): boolean => {
    if (stored.id === ours.id) return true;
    if (stored.session !== undefined && stored.session === ours.session) return (stored.seq ?? 0) >= (ours.seq ?? 0);
    return (ours.seq ?? 0) > 0 || stored.received_at >= ours.received_at;
  };

  /**
   * Persists the tokens and makes them current. When the write fails they are current all the same
   * (the tenant has already rotated the refresh token: throwing them away would end the session), kept
   * as `unsaved` to be written again on the next call, and the `STORAGE_FAILED` error is thrown.
   */
  const commit = async (t: TokenRecord): Promise<SessionInfo> => {
    unsaved = current = t;
    await store(() => storage.set(TOKENS, JSON.stringify(t)));
    if (unsaved === t) unsaved = undefined;
    return info(t);
  };

  /**
   * When the record was received, as this clock can tell: never later than now. A record stamped in
   * this clock's future was written by a process whose clock runs ahead; it counts as received now,
   * so a fleet with skewed clocks makes one refresh per expiry, not one per clock behind.
   */
  const receivedAt = (t: TokenRecord): number => Math.min(t.received_at, now());

  const info = (t: TokenRecord): SessionInfo => ({ expiresAt: receivedAt(t) + t.expires_in * 1000, scope: t.scope });

  /** {@link commit} for a refresh or a retried write: a failed write is reported, the session goes on. */
  const commitOrReport = async (t: TokenRecord): Promise<SessionInfo | undefined> => {
    try {
      return await commit(t);
    } catch (e) {
      reportUnsaved(e as TokenManagerError);
      return undefined;
    }
  };

  /** A failed write of new tokens: `storage-failed`, and the write tried again in a second. */
  const reportUnsaved = (error: TokenManagerError): void => {
    retryWriteAfter = now() + UNSAVED_RETRY_MS;
    emit("storage-failed", { error });
    retryWriteLater();
  };

  /**
   * After a failed write of fresh tokens, tries it again in a second even if no call comes: the
   * storage may have come back with the old record (Redis restarted from its append-only file), and
   * the others, honouring this process's intent, wait for exactly this write. On a timer that does
   * not keep a Node process alive.
   */
  const retryWriteLater = (): void => {
    const timer = setTimeout(() => {
      if (unsaved && current === unsaved && fresh(unsaved)) getAccessToken().catch(() => {});
    }, UNSAVED_RETRY_MS + 10);
    (timer as { unref?(): void }).unref?.();
  };

  const load = async (): Promise<TokenRecord | undefined> => {
    let raw: string | null | undefined;
    try {
      raw = await storage.get(TOKENS);
    } catch (e) {
      // A storage that found its data unreadable and set it aside (fileStorage's FILE_CORRUPT) has
      // no tokens now: that is no session, with the reason as the cause of NOT_SIGNED_IN.
      const reset = (e as { reset?: unknown } | undefined)?.reset;
      return fail(reset ? "NOT_SIGNED_IN" : "STORAGE_FAILED", reset ? "the stored tokens were unreadable" : "", sanitize(e, known()));
    }
    const record = parseJson(raw) as { received_at: number; id: string; session?: unknown; seq?: unknown };
    try {
      // An absent or unreadable record is no session.
      const session = typeof record.session === "string" ? record.session : undefined;
      const seq = typeof record.seq === "number" ? record.seq : undefined;
      return { ...parseTokenResponse(record), received_at: +record.received_at || 0, id: record.id, session, seq };
    } catch {}
    return undefined;
  };

  const fresh = (t: TokenRecord): boolean => {
    const lifetime = t.expires_in * 1000;
    // Stamped further ahead than the token lives: not skew but a wrong clock (this one or the
    // writer's). Refreshing then stamps the record with this clock.
    if (t.received_at - now() > lifetime) return false;
    return now() - receivedAt(t) < lifetime - Math.min(refreshLeewayMs, lifetime / 2);
  };

  /** Reads the refresh intent; `undefined` when there is none or it is unreadable. */
  const readIntent = async (): Promise<Intent | undefined> => {
    const intent = parseJson(await storage.get(INTENT)) as Partial<Intent>;
    const valid = isString(intent.fingerprint) && isString(intent.holder) && typeof intent.since === "number";
    return valid ? (intent as Intent) : undefined;
  };

  /** Deletes the intent if it is still `intent` (another holder's is left alone); failures are left to the bound. */
  const dropIntent = async (intent: Intent | undefined): Promise<void> => {
    if (!intent) return;
    if (ownIntent === intent) ownIntent = undefined;
    try {
      if ((await readIntent())?.holder === intent.holder) await storage.delete(INTENT);
    } catch {
      // Left behind, it holds the others back for at most intentWaitMs.
    }
  };

  /** When this process first saw each live intent (by holder id), on the monotonic clock: its wait is bounded from then. */
  const intentSeen = new Map<string, number>();

  /**
   * Before presenting `stored`'s refresh token: the live intent of another refresh with that same
   * token, which must be waited for, or `undefined` to go on. Goes on (with a warning) when the
   * intent's holder is known to have exited, or the intent is older than `intentWaitMs` or has been
   * waited on that long.
   */
  const blockingIntent = async (stored: TokenRecord): Promise<Intent | undefined> => {
    const intent = await store(readIntent);
    if (!intent || intent.fingerprint !== (await fingerprint(stored.refresh_token))) return undefined;
    const holder = { pid: intent.pid, host: intent.host };
    if (intent.pid !== undefined && intent.host !== undefined && identity?.gone(intent.host, intent.pid)) {
      log?.("intent-holder-gone", holder);
      return undefined;
    }
    if (intentSeen.size > 16) intentSeen.clear();
    const first = !intentSeen.has(intent.holder);
    const seen = intentSeen.get(intent.holder) ?? performance.now();
    intentSeen.set(intent.holder, seen);
    const ageMs = now() - intent.since;
    const waitedMs = performance.now() - seen;
    if (ageMs >= intentWaitMs || waitedMs >= intentWaitMs) {
      log?.("intent-expired", { ageMs: Math.round(ageMs), waitedMs: Math.round(waitedMs), intentWaitMs, ...holder });
      return undefined;
    }
    if (first) log?.("intent-wait", holder);
    return intent;
  };

  /**
   * Waits, outside the lock (the intent's holder may need it to write its tokens back), until the
   * record is no longer `recordId`, the intent is no longer `intent`, or its bound has passed.
   */
  const awaitIntent = async ({ intent, recordId }: IntentPending): Promise<void> => {
    const until = (intentSeen.get(intent.holder) ?? performance.now()) + intentWaitMs;
    while (performance.now() < until) {
      await sleep(50);
      if ((await load().catch(() => undefined))?.id !== recordId) return;
      if ((await readIntent().catch(() => undefined))?.holder !== intent.holder) return;
      if (intent.pid !== undefined && intent.host !== undefined && identity?.gone(intent.host, intent.pid)) return;
    }
  };

  const refresh = async (stored: TokenRecord, again?: boolean, held?: HeldLock): Promise<string> => {
    const gen = generation;
    const { access_token, refresh_token } = stored;
    let intent: Intent | undefined;
    if (intents) {
      // Checked before the intent is written too: a holder whose lock was taken over while it was
      // paused must not replace the new holder's intent.
      if (held && !(await held.isHeld())) throw new LockLost();
      const who = identity ? { pid: identity.pid, host: identity.host } : {};
      intent = { fingerprint: await fingerprint(refresh_token), holder: createState(), since: Math.floor(now()), ...who };
      try {
        await storage.set(INTENT, JSON.stringify(intent));
        ownIntent = intent;
      } catch {
        // An unwritable storage (a full disk) must not stop the refresh: the lock still makes it the
        // only one, and the new tokens are kept in memory if their write fails too.
        log?.("intent-unwritable", {});
        intent = undefined;
      }
    }
    log?.("refresh-started", {});
    for (let attempt = 1; ; attempt++) {
      let tokens: TokenRecord;
      try {
        if (intents) {
          // The last checks, right before the request leaves: the record is still the one read (no
          // other process stored a refresh meanwhile), and the lock is still this process's own.
          const latest = await load();
          if (latest?.id !== stored.id) {
            await dropIntent(intent);
            log?.("tokens-changed", {});
            return obtain(again, 0, held);
          }
          if (held && !(await held.isHeld())) {
            await dropIntent(intent);
            throw new LockLost();
          }
        }
        tokens = await tokenRequest(
          { grant_type: "refresh_token", refresh_token, client_id: clientId },
          known(access_token, refresh_token),
          stored,
          attempt,
        );
      } catch (e) {
        if (e instanceof LockLost) throw e;
        // Retried only when the request cannot have reached the tenant (no connection was made) or
        // was answered 503 ("unable to handle the request", RFC 9110 §15.6.4) or 429. For 429 that
        // the token is unused is assumed (RFC 6585 §4 does not say); were it used, its successor is
        // lost with the answer and the next call would present this token anyway (README, "Paused
        // processes and retries"). Any other failure may have rotated it: not retried.
        const retryable = e instanceof TransientError && (unsent.has(e) || e.status === 429 || e.status === 503);
        // A Retry-After is waited instead of the backoff; one over the cap is not waited at all: the
        // error says when to try again (as the Python manager and the client do).
        const retryAfterMs = retryable ? (e as TransientError).retryAfterMs : undefined;
        if (retryable && attempt < attempts && (retryAfterMs === undefined || retryAfterMs <= MAX_RETRY_DELAY_MS)) {
          const delayMs = retryAfterMs ?? Math.min(baseDelayMs * 2 ** (attempt - 1), MAX_RETRY_DELAY_MS);
          log?.("refresh-retry", { attempt, status: e.status, delayMs });
          await sleep(delayMs);
          continue;
        }
        await dropIntent(intent);
        if (e instanceof TransientError && !retryable) {
          log?.("refresh-not-retried", { status: e.status });
        }
        // Of what the try throws, only an OAuthResponseError has an `error` field.
        if ((e as OAuthResponseError).error !== "invalid_grant") throw e;
        // Another process may have rotated the token meanwhile: try the newest one once before giving
        // up. A storage that cannot be read leaves that unknown: the session is not ended (which
        // would delete the record for every process), and the read failure reaches the caller.
        let latest: TokenRecord | undefined;
        if (!again) {
          try {
            latest = await load();
          } catch (readError) {
            if ((readError as TokenManagerError).code !== "NOT_SIGNED_IN") throw readError;
          }
        }
        if (latest && latest.refresh_token !== refresh_token) return obtain(true, 0, held);
        const ended = new SessionEndedError((e as OAuthResponseError).status, e as OAuthResponseError);
        if (gen === generation) {
          log?.("session-ended", { status: ended.status });
          // The session is over whether or not the delete succeeds.
          await clear().catch(() => {});
          const { error, errorDescription, errorUri } = ended;
          const fields = { error, ...(errorDescription && { errorDescription }), ...(errorUri && { errorUri }) };
          announce({ event: "session-ended", status: ended.status, fields }, ended);
        }
        throw ended;
      }
      if (gen !== generation) {
        await dropIntent(intent);
        fail("NOT_SIGNED_IN");
      }
      // Under the refresh lock (so before any other tab reads), and even if the write below fails:
      // tabs whose localStorage still shows the old record learn from the lock manager (coherent
      // across tabs, unlike localStorage) that it is gone. Held for a bounded time, on a timer that
      // does not keep a Node process alive.
      if (locks)
        await new Promise<void>((granted) =>
          mark(stored, () => {
            granted();
            return new Promise((r) => (setTimeout(r, 30_000) as { unref?(): void }).unref?.());
          }).catch(granted),
        );
      const info = await commitOrReport(tokens);
      if (info) {
        // Stored: the intent has done its job. Kept while the write fails, so that the others do
        // not present the old token while this process writes the new one again.
        await dropIntent(intent);
        log?.("refresh-finished", { expiresAt: info.expiresAt });
        emit("tokens-refreshed", info);
      } else {
        log?.("refresh-unsaved", {});
      }
      return tokens.access_token;
    }
  };

  /** Runs under the lock: re-reads storage, and refreshes only if what it finds is not usable. */
  const obtain = async (again?: boolean, polls = 0, held?: HeldLock): Promise<string> => {
    // With a record whose write failed, storage is still read first: another process may have stored
    // newer tokens meanwhile (or the write went through after all), and those must not be overwritten
    // with ours, whose refresh token may be rotated away by now. Ours is written again only over a
    // record it supersedes (see `supersedes`). A storage that cannot even be read leaves ours in use.
    let stored = unsaved ? await load().catch(() => undefined) : await load();
    if (unsaved) {
      const ours = unsaved;
      if (stored && supersedes(stored, ours)) unsaved = undefined;
      else {
        stored = ours;
        try {
          await commit(ours);
        } catch (e) {
          reportUnsaved(e as TokenManagerError);
          // Never refresh from tokens that are not stored (issue 27): the refresh would check storage
          // for a record that can never appear there, and every further rotation would widen the gap
          // between the tenant and what the other processes read. The tokens stay kept, and are
          // written, then refreshed from, once the storage takes them.
          if (!fresh(ours) || ours.access_token === rejected) {
            fail("STORAGE_FAILED", "the refreshed tokens cannot be written, so they are not refreshed again until they are", (e as TokenManagerError).cause);
          }
        }
      }
      // Written (or superseded): this process's intent on the old token has done its job.
      if (!unsaved) await dropIntent(ownIntent);
    }
    if (!stored) return fail("NOT_SIGNED_IN");
    if (!fresh(stored) || stored.access_token === rejected) {
      if (intents) {
        const intent = await blockingIntent(stored);
        // Released, and waited for outside the lock (see getAccessToken).
        if (intent) throw new IntentPending(intent, stored.id);
      }
      if (!locks || (await mark(stored, (l) => l))) return refresh(stored, again, held);
      // Marked rotated away: this tab's storage lags behind. Never send that refresh token: re-read
      // (bounded) until the record that replaced it shows, and decide again with that one.
      if (polls > 99) throw new TransientError(undefined, 0);
      await sleep(30);
      return obtain(again, polls + 1);
    }
    current = stored;
    return stored.access_token;
  };

  /**
   * For tokens whose write failed and that are still fresh: the outcome of retrying the write, or,
   * when the retry cannot even run (the storage or its lock is unreachable: Redis down, a lock
   * timeout), the tokens all the same. The tenant has them as current; failing the call would
   * only make the one process that holds them unable to use them. The failure is reported with
   * `storage-failed`, and the write is tried again on the next call.
   */
  const servingUnsaved = (retry: Promise<string>, held: TokenRecord): Promise<string> =>
    retry.catch((e: unknown) => {
      // Signed out or in again meanwhile, or expired while the lock was awaited: nothing to hand out.
      if (current !== held || unsaved !== held || !fresh(held)) throw e;
      const error = new TokenManagerError("STORAGE_FAILED", "STORAGE_FAILED", sanitize(e, known()));
      retryWriteAfter = now() + UNSAVED_RETRY_MS;
      log?.("rewrite-failed", {});
      emit("storage-failed", { error });
      retryWriteLater();
      return held.access_token;
    });

  /**
   * Tokens in storage usable as they are (fresh, not refused, no unsaved record of ours to write back),
   * read without the lock: another process refreshed them, so this one neither waits for the lock nor
   * takes it. `undefined` when they must be refreshed, or sign-in or sign-out happened meanwhile.
   */
  const freshInStorage = async (read: Promise<TokenRecord | undefined>): Promise<TokenRecord | undefined> => {
    const before = generation;
    const stored = await read;
    return stored && before === generation && !unsaved && fresh(stored) && stored.access_token !== rejected ? stored : undefined;
  };

  const getAccessToken = async (): Promise<string> => {
    // A record whose write failed is still served; a call goes through obtain() to retry the write,
    // but at most once a second after a failed try.
    if (current && fresh(current) && (!unsaved || (current === unsaved && now() < retryWriteAfter))) return current.access_token;
    if (!inflight) {
      log?.("lock-wait", {});
      const underLock = (heldLock?: HeldLock) => {
        log?.("lock-taken", {});
        return obtain(false, 0, heldLock);
      };
      // Set when the wait for the lock ended because storage came to hold fresh tokens (see `until`).
      let found: TokenRecord | undefined;
      // With a lock that processes share: while waiting, each wake of the lock re-reads storage, and
      // the wait ends once another process has stored fresh tokens (a read error: wait on).
      const wait = intents ? { until: async () => (found = await freshInStorage(load().catch(() => undefined))) !== undefined } : undefined;
      /**
       * Takes the lock again when it was found lost before a refresh left (this process was paused
       * and another took it over), and after waiting for another refresh's intent.
       */
      const locked = (tries = 1): Promise<string> =>
        lock(key + "lock", underLock, wait).catch(async (e: unknown) => {
          if (found) {
            log?.("fresh-while-waiting", {});
            current = found;
            return found.access_token;
          }
          if (e instanceof IntentPending) {
            await awaitIntent(e);
            return locked(tries);
          }
          if (!(e instanceof LockLost)) throw e;
          log?.("lock-lost", { tries });
          if (tries >= 3) throw new TransientError(undefined, 0);
          return locked(tries + 1);
        });
      const held = unsaved && current === unsaved && fresh(unsaved) ? unsaved : undefined;
      /**
       * With a lock that processes share, storage is read first without it: when another process has
       * already stored fresh tokens, they are used and the lock is neither awaited nor taken. Only
       * when storage is stale too is the lock taken (and storage read again under it).
       */
      const readFirst = async (): Promise<string> => {
        const stored = await freshInStorage(load());
        if (!stored) return locked();
        log?.("fresh-in-storage", {});
        current = stored;
        return stored.access_token;
      };
      const run = intents && !unsaved ? readFirst() : locked();
      inflight = (held ? servingUnsaved(run, held) : run).finally(() => (inflight = undefined));
    }
    return inflight;
  };

  const clear = (): Promise<void> => {
    generation++;
    current = unsaved = undefined;
    return store(() => storage.delete(TOKENS));
  };

  /** Clears the tokens at the user's request, and fires `signed-out` here and in the other tabs. */
  const signOut = async (revoked = false): Promise<void> => {
    await clear();
    announce({ event: "signed-out", revoked });
  };

  const getSession = async (): Promise<SessionInfo | undefined> => {
    // Tokens whose write failed are this process's session, whatever storage says.
    if (unsaved && current === unsaved) return info(unsaved);
    try {
      const stored = await load();
      return stored && info(stored);
    } catch (e) {
      // Unreadable data set aside by the storage: no session.
      if ((e as TokenManagerError).code === "NOT_SIGNED_IN") return undefined;
      throw e;
    }
  };

  return {
    async beginAuthorization({ scopes: asked = scopes } = {}) {
      checkScopes(asked);
      const { verifier, challenge } = await createPkcePair({ random });
      const state = createState(random);
      const expiresAt = now() + (options.pendingLifetimeMs ?? 600_000);
      await store(() => pendingStorage.set(PENDING, JSON.stringify({ state, verifier, expiresAt })), verifier);
      const query = String(new URLSearchParams({
        response_type: "code",
        client_id: clientId,
        redirect_uri: redirectUri,
        scope: asked.join(" "),
        state,
        code_challenge: challenge,
        code_challenge_method: "S256",
      }));
      // Spaces as %20, not the form encoding's "+", which some servers read literally.
      return { url: base + "/oauth/authorize?" + query.replace(/\+/g, "%20"), expiresAt };
    },

    async completeAuthorization(callbackUrl) {
      // Not a URL at all (location.search for location.href) is the caller's slip, not a callback:
      // refused before the pending sign-in is taken, so that the whole URL can follow.
      const url = parseUrl(callbackUrl, "not an absolute URL: pass the whole callback URL (location.href), not location.search", "INVALID_CALLBACK");
      // Take the pending sign-in before any other check, so that it is used at most once whatever happens.
      const raw = await store(() => pendingStorage.get(PENDING));
      if (raw) await store(() => pendingStorage.delete(PENDING));
      const params = url.searchParams;
      // Mix-up defence: the answer must come back where this client asked for it.
      if (callbackTarget(url) !== redirectTo) fail("INVALID_CALLBACK", "not at redirectUri");
      // An ambiguous callback is refused rather than read last-one-wins.
      for (const k of ["state", "code", "error"]) if (params.getAll(k).length > 1) fail("INVALID_CALLBACK", "repeated " + k);
      // An absent or unreadable record is no pending sign-in.
      const { state, verifier, expiresAt } = parseJson(raw) as Record<string, unknown>;
      if (!isString(state) || !isString(verifier) || typeof expiresAt !== "number") return fail("NO_PENDING_SIGN_IN");
      const received = params.get("state") ?? fail("STATE_MISSING");
      if (!constantTimeEqual(received, state)) fail("STATE_MISMATCH");
      if (now() > expiresAt) fail("STATE_EXPIRED");
      const denied = parseOAuthError(Object.fromEntries(params));
      if (denied) fail("AUTHORIZATION_DENIED", describe(denied), undefined, denied);
      const code = params.get("code") || fail("INVALID_CALLBACK", "no code");
      generation++;
      const exchange = { grant_type: "authorization_code", client_id: clientId, redirect_uri: redirectUri, code, code_verifier: verifier };
      const session = await commit(await tokenRequest(exchange, known(code, verifier)));
      log?.("signed-in", { expiresAt: session.expiresAt, scope: session.scope });
      announce({ event: "signed-in", session });
      return session;
    },

    getAccessToken,

    onUnauthorized(rejectedToken) {
      if (current?.access_token === rejectedToken) {
        rejected = rejectedToken;
        current = undefined;
      }
    },

    async revoke() {
      let token: string;
      try {
        token = await getAccessToken();
      } catch (e) {
        // Without a session there is nothing to revoke: only clear.
        const code = (e as TokenManagerError | undefined)?.code;
        if (code === "NOT_SIGNED_IN" || code === "SESSION_ENDED") return signOut();
        throw e;
      }
      await post(
        "/oauth/revoke",
        String(new URLSearchParams({ token, token_type_hint: "access_token", client_id: clientId })),
        "application/x-www-form-urlencoded",
        known(token),
      );
      await clear();
      log?.("revoked", {});
      emit("revoked");
      announce({ event: "signed-out", revoked: true });
    },

    signOut: () => signOut(),

    async isSignedIn() {
      return (await getSession()) !== undefined;
    },

    getSession,

    on(event, listener) {
      (listeners[event] ??= new Set()).add(listener);
      return () => listeners[event]?.delete(listener);
    },

    off(event, listener) {
      listeners[event]?.delete(listener);
    },
  };
}
