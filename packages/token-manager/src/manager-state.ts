/**
 * The one state object of a token manager: its settings, fixed when it is made, and what changes
 * while it runs. `createTokenManager` builds it and binds the behaviours of the modules beside this
 * one to it (`getAccessToken.bind(null, state)`), as Octokit's auth strategies do; each behaviour is
 * a top-level `(state, …)` function, findable and testable by name.
 */
import { scopes as SCOPES, type Scope } from "@tenant-integration/types";
import { isString, type RandomSource } from "./encoding.js";
import { fail } from "./errors.js";
import type { FetchLike } from "./fetch.js";
import { processLock, webLock, type Lock, type LockManagerLike } from "./lock.js";
import type { SessionLogger } from "./logger.js";
import { need, redirectTarget, tenantBase } from "./options.js";
import { sanitize } from "./redact.js";
import type { IntentBeat, IntentWatch, RefreshIntents } from "./refresh-intent.js";
import { memoryStorage } from "./storage/memory.js";
import type { ProcessIdentity, TokenStorage } from "./storage/storage.js";
import type { TokenRecord } from "./token-record.js";
import type { TokenManagerEvents, TokenManagerOptions } from "./types.js";

/** Tokens, codes and verifiers to scrub from errors; `undefined` where there is none (skipped). */
export type Secrets = (string | undefined)[];

/**
 * The storage names and the lock name, scoped by tenant origin, client and session
 * (spec/token-store/README.md, "Names and keys").
 */
export interface Keys {
  readonly tokens: string;
  /** What each pending sign-in's name starts with: `tenant-integration:<origin>:<clientId>:pending:`, then its key. */
  readonly pending: string;
  readonly intent: string;
  readonly lock: string;
  /** The prefix of the scope's names, of the tabs' channel and of the rotation markers' lock names. */
  readonly prefix: string;
}

/**
 * The names of a scope: `tenant-integration:<origin>:<clientId>[:<sessionId>]:<kind>`, and the
 * prefix of pending sign-ins' names, which belong to no session.
 *
 * @example
 * ```ts
 * scopeKeys("https://acme.tenant.test", "demo", "42").tokens; // "tenant-integration:https://acme.tenant.test:demo:42:tokens"
 * ```
 */
export function scopeKeys(origin: string, clientId: string, sessionId?: string): Keys {
  const client = "tenant-integration:" + origin + ":" + clientId + ":";
  const prefix = sessionId === undefined ? client : client + sessionId + ":";
  return {
    tokens: prefix + "tokens",
    pending: client + "pending:",
    intent: prefix + "intent",
    lock: prefix + "lock",
    prefix,
  };
}

/** A manager's state: settings (read-only) and what changes while it runs. */
export interface ManagerState {
  readonly clientId: string;
  /** The session id; `undefined` for a manager of one session per storage. */
  readonly sessionId: string | undefined;
  readonly scopes: readonly Scope[];
  /** The tenant's origin, e.g. `https://acme.tenant.test`: every request is this plus a fixed path. */
  readonly base: string;
  readonly redirectUri: string;
  /** The part of the redirect URI a callback must share with it (see `redirectTarget`). */
  readonly redirectTo: string;
  readonly storage: TokenStorage;
  readonly pendingStorage: TokenStorage;
  readonly pendingLifetimeMs: number;
  readonly now: () => number;
  readonly random: RandomSource | undefined;
  /** The `fetch` option; the global `fetch` is looked up at call time when it is absent. */
  readonly fetch: FetchLike | undefined;
  readonly requestTimeoutMs: number;
  readonly refreshLeewayMs: number;
  readonly retry: { readonly attempts: number; readonly baseDelayMs: number };
  readonly intentWaitMs: number;
  readonly log: SessionLogger | undefined;
  readonly keys: Keys;
  /** The refresh lock. */
  readonly lock: Lock;
  /** Web Locks, when they are the refresh lock: the tabs' rotation markers are taken there too. */
  readonly locks: LockManagerLike | undefined;
  /**
   * The refresh intents, handed over with a lock that processes share (file, Redis, PostgreSQL, a lock
   * given with them); `undefined` otherwise: tabs coordinate through Web Locks and their rotation
   * markers, and an app that never imports such a storage never bundles them (refresh-intent.ts).
   */
  readonly intents: RefreshIntents | undefined;
  readonly identity: ProcessIdentity | undefined;
  /** The tabs' channel, with a storage the tabs share (one with a `tabStorage`). */
  readonly channel: BroadcastChannel | undefined;
  readonly listeners: Partial<Record<keyof TokenManagerEvents, Set<(payload: never) => void>>>;
  /**
   * This process's watch of another process's live refresh intent (decision D1): it goes on while
   * the storage answers, and ends with a failed read or a pause; the wait is bounded by it.
   */
  intentWatch: IntentWatch | undefined;
  /** The beats of this process's own intent while it is stored (decision D7; refresh-intent.ts). */
  intentBeat: IntentBeat | undefined;

  /** The tokens in use. */
  current: TokenRecord | undefined;
  /** The access token an API refused (onUnauthorized): not handed out again. */
  rejected: string | undefined;
  /** Tokens whose write failed: usable in this process, and written again on the next call. */
  unsaved: TokenRecord | undefined;
  /** Until when (in `now()` ms) unsaved tokens are served without trying their write again. */
  retryWriteAfter: number;
  /** The timer that tries the write of unsaved tokens again (see refresh.ts, `retryWriteLater`). */
  rewriteTimer: ReturnType<typeof setTimeout> | undefined;
  /** `close()` was called: no beat starts, no write of unsaved tokens is retried in the background. */
  closed: boolean;
  /** The one `getAccessToken` under way, which every caller meanwhile shares. */
  inflight: Promise<string> | undefined;
  /** The last value found under the intent key that is not an intent record: warned about once. */
  foreignIntent: string | undefined;
  /** The refresh intent this manager stored and has not yet cleared (its refresh's tokens are not stored yet): see refresh-intent.ts. */
  ownIntent: { readonly holder: string } | undefined;
  /** Bumped by sign-in and sign-out, so that a refresh begun before cannot resurrect or overwrite tokens. */
  generation: number;
}

/**
 * Why a lock that processes share is refused without the refresh intents: a holder paused after its
 * refresh left would make another process present the rotated-away token.
 */
const NO_INTENTS =
  'lock: a lock of your own needs refreshIntents (from "@tenant-integration/token-manager") beside it, on the storage or as an option';

/** The in-process refresh lock, shared by the managers of this realm that have no other. */
let sharedLock: Lock | undefined;

/**
 * Checks scopes against the contract's scope names (each an RFC 6749 §3.3 scope-token, so none holds
 * a space): at least one, every one known.
 *
 * @throws a `TokenManagerError` `INVALID_OPTIONS` otherwise.
 */
export function checkScopes(scopes: unknown): readonly Scope[] {
  need(Array.isArray(scopes) && scopes.length, "scopes: at least one scope");
  const unknown = (scopes as unknown[]).find((s) => !SCOPES.includes(s as Scope));
  if (unknown !== undefined)
    fail("INVALID_OPTIONS", `scopes: ${JSON.stringify(String(unknown))} is not a scope of the service`);
  return scopes as readonly Scope[];
}

/**
 * Checks the options and makes the state of a new manager: of one session per storage, or of the
 * session `sessionId`, already checked by the caller (`createSessionManager`, `createSessions`), so
 * that the session id rule (session-id.ts) reaches only apps that use sessions.
 *
 * @throws a `TokenManagerError` `INVALID_OPTIONS` for an invalid option, saying which.
 */
export function createManagerState(options: TokenManagerOptions, sessionId?: string): ManagerState {
  const { clientId, scopes, storage = memoryStorage(), logger } = options;
  // A session id option would be ignored here and the session's tokens kept as the storage's one
  // session: refused, pointing at the manager of a session.
  need(
    !("sessionId" in options),
    "sessionId: the manager of one session is createSessionManager({ ...options, sessionId })",
  );
  const base = tenantBase(options.baseUrl);
  const redirectUri = String(options.redirectUri);
  const redirectTo = redirectTarget(redirectUri);
  need(logger === undefined || typeof logger === "function", "logger: pass logSessionTo(logger, level)");
  need(isString(clientId) && clientId, "clientId");
  checkScopes(scopes);
  // The lock option wins, then the storage's own lock (file, Redis). With either, no Web Locks:
  // neither the refresh lock nor the rotation markers.
  const ownLock = options.lock ?? storage.lock;
  const intents = ownLock && (options.refreshIntents ?? storage.refreshIntents);
  need(!ownLock || intents, NO_INTENTS);
  const locks = ownLock ? undefined : (globalThis as { navigator?: { locks?: LockManagerLike } }).navigator?.locks;
  const keys = scopeKeys(new URL(base).origin, clientId, sessionId);
  // With a storage the tabs share, the tabs tell each other of sign-ins and sign-outs. Only then: an
  // open channel keeps Node, Deno and Bun processes alive (unref'd where that exists).
  const channel =
    storage.tabStorage && typeof BroadcastChannel === "function"
      ? new BroadcastChannel(keys.prefix + "events")
      : undefined;
  (channel as { unref?(): void } | undefined)?.unref?.();
  return {
    clientId,
    sessionId,
    scopes,
    base,
    redirectUri,
    redirectTo,
    storage,
    pendingStorage: options.pendingStorage ?? storage.tabStorage ?? storage,
    pendingLifetimeMs: options.pendingLifetimeMs ?? 600_000,
    now: options.now ?? Date.now,
    random: options.random,
    fetch: options.fetch,
    requestTimeoutMs: options.requestTimeoutMs ?? 10_000,
    refreshLeewayMs: options.refreshLeewayMs ?? 60_000,
    retry: { attempts: options.retry?.attempts ?? 3, baseDelayMs: options.retry?.baseDelayMs ?? 300 },
    intentWaitMs: options.intentWaitMs ?? 20_000,
    log: sessionLog(logger, sessionId),
    keys,
    lock: ownLock ?? (locks ? webLock(locks, options.lockTimeoutMs) : (sharedLock ??= processLock())),
    locks,
    intents: intents || undefined,
    identity: storage.processIdentity,
    channel,
    listeners: {},
    intentWatch: undefined,
    intentBeat: undefined,
    current: undefined,
    rejected: undefined,
    unsaved: undefined,
    retryWriteAfter: 0,
    rewriteTimer: undefined,
    closed: false,
    inflight: undefined,
    foreignIntent: undefined,
    ownIntent: undefined,
    generation: 0,
  };
}

/**
 * The manager's log: with a session, every event carries its `sessionId` (which `logSessionTo` writes
 * only at debug level: the id may be personal data).
 */
export function sessionLog(log: SessionLogger | undefined, sessionId: string | undefined): SessionLogger | undefined {
  return log && sessionId !== undefined ? (event, fields) => log(event, { ...fields, sessionId }) : log;
}

/**
 * Where a user finds the manager's `key` in its storage, for messages: what the storage's `where`
 * says (`redisStorage`: the Redis key, prefix and hash tag included), else the key itself.
 */
export function whereIs(state: ManagerState, key: string): string {
  const where = state.storage.where?.(key);
  return typeof where === "string" ? where : key;
}

/** Every token, code and verifier in play (the `extra` ones and the manager's), for scrubbing. */
export const known = (state: ManagerState, ...extra: string[]): Secrets => [
  ...extra,
  state.current?.access_token,
  state.current?.refresh_token,
  state.unsaved?.access_token,
  state.unsaved?.refresh_token,
];

/**
 * Runs a storage operation; its failure becomes `STORAGE_FAILED`, with the storage's error (scrubbed
 * of `secrets` and the manager's tokens) as cause.
 */
export async function store<T>(state: ManagerState, op: () => Promise<T>, ...secrets: string[]): Promise<T> {
  try {
    return await op();
  } catch (e) {
    return fail("STORAGE_FAILED", "", sanitize(e, known(state, ...secrets)));
  }
}

/**
 * Stops the beats of this process's intent, if any (refresh-intent.ts): the timer cleared, a beat
 * whose read is under way told to write nothing; resolves once a beat's write under way is done.
 */
export function haltBeats(state: ManagerState): Promise<void> | undefined {
  const current = state.intentBeat;
  if (!current) return undefined;
  clearInterval(current.timer);
  current.stopped = true;
  state.intentBeat = undefined;
  return current.writing?.catch(() => undefined);
}

/**
 * `close()`: the manager's background work stops — the beats of its refresh intent and the retried
 * write of unsaved tokens. The intent stays stored: another process gives it up once it has watched
 * it for `intentWaitMs` without a beat (spec/token-store, "Paused processes").
 */
export function closeManager(state: ManagerState): void {
  state.closed = true;
  void haltBeats(state);
  clearTimeout(state.rewriteTimer);
  state.rewriteTimer = undefined;
}
