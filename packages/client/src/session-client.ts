/**
 * The API client of one session of a server acting for many users: a client whose tokens come from
 * the session's manager, over one openapi-fetch client that every session's shares. Takes any
 * object whose `manager(id)` returns an auth strategy (`createSessions` of
 * `@tenant-integration/token-manager` is one), so this package imports no token manager.
 *
 * @see RFC 6750 §2.1
 */
import type { Client } from "openapi-fetch";
import type { AccessTokenSource } from "./access-token-source.js";
import { type CallInit, METHODS, typedClient } from "./call.js";
import { type BearerState, bearerState, type ClientState } from "./client-state.js";
import type { RawPaths, TenantPaths, TypedClient, WithErrorClasses } from "./client-types.js";
import { createClientState, type TenantClient, type TenantClientOptions } from "./create-tenant-client.js";
import { TenantClientError } from "./errors.js";
import { send } from "./send.js";

/** What {@link sessionClient} needs of a sessions object: the auth strategy of a session by id. */
export interface SessionSource {
  /** The auth strategy (the token manager) of the session; throws for an invalid id. */
  manager(sessionId: string): AccessTokenSource;
  /** The tenant's origin, used when the options give no `baseUrl`. */
  readonly baseUrl?: string;
}

/** Options of {@link sessionClient}: the client's, but `auth` (the session's manager), with `baseUrl` optional. */
export type SessionClientOptions = Omit<TenantClientOptions, "auth" | "baseUrl"> & { readonly baseUrl?: string };

/** The options of a call without any: one object, so that such calls share one openapi-fetch client. */
const NO_OPTIONS: SessionClientOptions = {};

/**
 * The client state of each sessions object for each options object: its one openapi-fetch client,
 * shared by every session's client made with those options (garbage with either).
 */
const shared = new WeakMap<SessionSource, WeakMap<SessionClientOptions, ClientState>>();

/** Each manager's token as its session's clients add it: dropped (garbage) with the manager. */
const bearers = new WeakMap<AccessTokenSource, BearerState>();

/**
 * The token source of a session's clients: the session's manager, asked of the sessions object at
 * every request, so that a client kept past the manager's drop from the cache goes on working.
 */
class SessionAuth implements AccessTokenSource {
  readonly #sessions: SessionSource;
  readonly #sessionId: string;
  constructor(sessions: SessionSource, sessionId: string) {
    this.#sessions = sessions;
    this.#sessionId = sessionId;
  }
  getAccessToken() {
    return this.#sessions.manager(this.#sessionId).getAccessToken();
  }
  onUnauthorized(rejected: string) {
    return this.#sessions.manager(this.#sessionId).onUnauthorized?.(rejected);
  }
}

/** A token source that is never asked: the shared state's, whose calls always bring a session's. */
const NO_AUTH: AccessTokenSource = {
  getAccessToken: () => Promise.reject(new TenantClientError("INVALID_OPTIONS", "no session")),
};

/** The state every session's client of `sessions` made with `options` shares (its openapi-fetch client). */
function sharedState(sessions: SessionSource, options: SessionClientOptions): ClientState {
  let byOptions = shared.get(sessions);
  if (!byOptions) {
    byOptions = new WeakMap();
    shared.set(sessions, byOptions);
  }
  let state = byOptions.get(options);
  if (!state) {
    state = createClientState({ ...options, baseUrl: options.baseUrl ?? sessions.baseUrl ?? "", auth: NO_AUTH });
    byOptions.set(options, state);
  }
  return state;
}

/**
 * The API client of session `sessionId` of `sessions`. Its token comes, at every request, from
 * `sessions.manager(sessionId)`, so the session's own single flight and lock refresh it, and a
 * client kept past its manager's drop from the cache goes on working. Every session's client made
 * with the same `options` object (define the options once, as a constant) shares one openapi-fetch
 * client and its middleware: asking for a session's client costs a lookup and a small object, and a
 * cached session keeps nothing of it but its token. Its `use` and `eject` are refused, since they
 * would reach every session: pass middleware in `options`.
 *
 * @throws what `sessions.manager` throws for an invalid id (the token manager's `INVALID_SESSION_ID`),
 * and `TenantClientError` `INVALID_OPTIONS` as `createTenantClient`
 * @example
 * ```ts
 * const sessions = createSessions({ ...options, storage: redisStorage(redis) });
 * const api = { retry: retryPolicy() };
 * const { data } = await sessionClient(sessions, user.id, api).GET("/api/v1/auth/user");
 * ```
 * @see RFC 6750 §2.1
 */
export function sessionClient(
  sessions: SessionSource,
  sessionId: string,
  options: SessionClientOptions = NO_OPTIONS,
): TenantClient {
  const manager = sessions.manager(sessionId);
  let bearer = bearers.get(manager);
  if (!bearer) {
    bearer = bearerState(new SessionAuth(sessions, sessionId));
    bearers.set(manager, bearer);
  }
  const shared = sharedState(sessions, options);
  const state: ClientState = { ...shared, bearer, openapi: undefined! };
  (state as { openapi: unknown }).openapi = sessionOpenapi(shared.openapi, state);
  const typed = typedClient(state, false) as unknown as TypedClient<TenantPaths>;
  return Object.assign(typed, {
    raw: typedClient(state, true) as unknown as TypedClient<WithErrorClasses<RawPaths>>,
    baseUrl: state.baseUrl,
  });
}

/**
 * The openapi-fetch client of a session's client: the shared one, every call of it sent with the
 * session's token (`state`'s `fetch`, unless the call brings its own, as `callWith` does); its
 * `use` and `eject` are refused, since they would reach every session's client.
 */
function sessionOpenapi(openapi: Client<RawPaths>, state: ClientState): Client<RawPaths> {
  const sessionFetch = (request: Request) => send(state, undefined, request);
  const shared = openapi as unknown as Record<string, (url: string, init: object) => Promise<unknown>>;
  const methods: Record<string, unknown> = { use: refuseMiddleware, eject: refuseMiddleware };
  for (const method of METHODS)
    methods[method] = (url: string, init?: CallInit) =>
      shared[method]!(url, { ...init, fetch: init?.fetch ?? sessionFetch });
  return methods as unknown as Client<RawPaths>;
}

/** `use` and `eject` of a session's client: refused, since its middleware is every session's (the options'). */
function refuseMiddleware(): never {
  throw new TenantClientError(
    "INVALID_OPTIONS",
    "a session's client shares its middleware with every session's client of the same options: pass it in the options of sessionClient",
  );
}
