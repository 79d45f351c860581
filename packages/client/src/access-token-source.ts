import { TenantClientError } from "./errors.js";

/**
 * How the client obtains bearer tokens. The client knows nothing of OAuth flows: it asks the
 * strategy for a current token before every API request and tells it when the server rejected one.
 * `@tenant-integration/token-manager` implements this interface; {@link staticToken} is the
 * simplest implementation.
 *
 * @example
 * ```ts
 * const auth: AccessTokenSource = {
 *   getAccessToken: async () => (await myStore.load()).accessToken,
 *   onUnauthorized: async (rejected) => { await myStore.refreshIfStill(rejected); },
 * };
 * ```
 * @see RFC 6750 §2.1 (the token is sent as `Authorization: Bearer <token>`)
 * @see RFC 6749 §6 (refreshing an access token)
 */
export interface AccessTokenSource {
  /**
   * Resolves to a current access token. Called before every request to `/api/v1` of the tenant.
   * Should be cheap when a valid token is cached: returning the same promise while the token stays
   * valid lets the client add it without awaiting (as {@link staticToken} and the token manager do).
   * Whatever it throws is passed to the caller unchanged.
   */
  getAccessToken(): Promise<string>;
  /**
   * Called once when the server answered 401 to a request that carried `rejectedToken`, before the
   * client asks {@link AccessTokenSource.getAccessToken} again and retries once. A strategy refreshes here
   * (and should do nothing if its current token already differs from `rejectedToken`, because a
   * concurrent request refreshed it).
   */
  onUnauthorized?(rejectedToken: string): Promise<void> | void;
}

/**
 * An {@link AccessTokenSource} that always yields the same token, for scripts, tests and tokens managed
 * elsewhere. It has no `onUnauthorized`, so a 401 is returned to the caller without a retry.
 * The token lives only in a closure: printing the strategy (`console.log`, `JSON.stringify`)
 * cannot show it.
 *
 * @param token - the access token
 * @returns a strategy whose `getAccessToken()` resolves to `token`
 * @throws {@link TenantClientError} `INVALID_OPTIONS` when `token` is not a non-empty string (the message never contains it)
 * @example
 * ```ts
 * const client = createTenantClient({ baseUrl: "https://acme.tenant.example", auth: staticToken(process.env.TOKEN!) });
 * ```
 * @see RFC 6750 §2.1
 */
export function staticToken(token: string): AccessTokenSource {
  if (typeof token !== "string" || token.length === 0)
    throw new TenantClientError("INVALID_OPTIONS", "Invalid staticToken: the token must be a non-empty string");
  // one promise for every call: the client's middleware then adds the header without awaiting
  const resolved = Promise.resolve(token);
  return { getAccessToken: () => resolved };
}
