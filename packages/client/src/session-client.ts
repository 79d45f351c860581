/**
 * The API client of one session of a server acting for many users: a client whose tokens come from
 * the session's manager, cached with that manager. Takes any object whose `manager(id)` returns an
 * auth strategy (`createSessions` of `@tenant-integration/token-manager` is one), so this package
 * imports no token manager.
 *
 * @see RFC 6750 §2.1
 */
import type { AccessTokenSource } from "./access-token-source.js";
import { createTenantClient, type TenantClient, type TenantClientOptions } from "./create-tenant-client.js";

/** What {@link sessionClient} needs of a sessions object: the auth strategy of a session by id. */
export interface SessionSource {
  /** The auth strategy (the token manager) of the session; throws for an invalid id. */
  manager(sessionId: string): AccessTokenSource;
  /** The tenant's origin, used when the options give no `baseUrl`. */
  readonly baseUrl?: string;
}

/** Options of {@link sessionClient}: the client's, but `auth` (the session's manager), with `baseUrl` optional. */
export type SessionClientOptions = Omit<TenantClientOptions, "auth" | "baseUrl"> & { readonly baseUrl?: string };

/** The options of a call without any: one object, so that such calls share the cached client. */
const NO_OPTIONS: SessionClientOptions = {};

/** Each manager's client, with the options it was made with: dropped (garbage) with the manager. */
const clients = new WeakMap<AccessTokenSource, { options: SessionClientOptions; client: TenantClient }>();

/**
 * The API client of session `sessionId` of `sessions`. Its token comes, at every request, from
 * `sessions.manager(sessionId)`, so the session's own single flight and lock refresh it, and a
 * client kept past its manager's drop from the cache goes on working. Cached with the session's
 * manager for the same `options` object (define the options once, as a constant): asking again
 * costs a lookup, and an idle session's client is dropped with its manager.
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
  const cached = clients.get(manager);
  if (cached?.options === options) return cached.client;
  const auth: AccessTokenSource = {
    getAccessToken: () => sessions.manager(sessionId).getAccessToken(),
    onUnauthorized: (rejected) => sessions.manager(sessionId).onUnauthorized?.(rejected),
  };
  const client = createTenantClient({ ...options, baseUrl: options.baseUrl ?? sessions.baseUrl ?? "", auth });
  clients.set(manager, { options, client });
  return client;
}
