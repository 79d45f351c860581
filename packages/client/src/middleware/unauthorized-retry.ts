/**
 * The 401 concern: a 401 to a request that carried the client's token is told to the strategy
 * (`onUnauthorized`), and the request is sent once more with the new token, if there is one.
 *
 * @see RFC 6750 §3.1 (`invalid_token` is answered with 401), RFC 6749 §6 (refreshing)
 */
import type { Middleware } from "openapi-fetch";
import { apiPrefix, inScope } from "../base-url.js";
import { type SendState, sendState } from "../client-state.js";
import { bearerTokenOf, NetworkError } from "../errors.js";
import { type Outcome, sendAttempt } from "./attempt.js";
import { type BearerMiddlewareOptions, freshToken } from "./bearer.js";
import { discard, type Exchange, keepCopy, keptFor, rebuild, type ReplayBody } from "./replay.js";

/** Options of {@link unauthorizedRetryMiddleware}: the tenant base URL and the strategy told about rejected tokens. */
export type UnauthorizedRetryMiddlewareOptions = BearerMiddlewareOptions;

/**
 * After a 401 to the exchange's request, which carried `exchange.token`: tell the strategy, get a
 * new token and send once more (attempt `attempt + 1`) if it differs. A strategy that fails here
 * (the session ended) is logged and its error reaches the caller unchanged; a resend that gets no
 * answer throws its {@link NetworkError}.
 */
export async function refreshAndResend(
  state: SendState,
  exchange: Exchange & { readonly token: string },
  response: Response,
  attempt: number,
): Promise<Response> {
  const { request, token: rejected } = exchange;
  const { log } = state;
  const bearer = state.bearer!;
  log?.("refreshing", request, {});
  let next: string;
  try {
    await bearer.auth.onUnauthorized?.(rejected);
    next = await freshToken(bearer);
  } catch (failure) {
    const { name: error, code } = (failure ?? {}) as { name?: unknown; code?: unknown };
    log?.("session-ended", request, { error, code });
    throw failure;
  }
  if (next === rejected) {
    log?.("no-new-token", request, {});
    return response;
  }
  log?.("refreshed", request, {});
  discard(response);
  const outcome = await sendAttempt(exchange.fetch, rebuild(exchange, next), attempt + 1, log);
  if (outcome instanceof NetworkError) throw outcome;
  state.tokensSent.set(outcome, [rejected, next]);
  return outcome;
}

/**
 * The last step of an exchange, given its answer (after any retries, the last being attempt
 * `attempt`): the one refresh-and-retry of a 401 to a request that carried a token and can be sent
 * again; and, for a non-2xx answer, the token sent remembered for its error value.
 */
export async function settle(
  state: SendState,
  exchange: Exchange,
  outcome: Outcome,
  attempt: number,
): Promise<Response> {
  if (outcome instanceof NetworkError) throw outcome;
  const { token } = exchange;
  if (token === undefined) return outcome;
  const refresh = outcome.status === 401 && exchange.body !== undefined && state.bearer !== undefined;
  const settled = refresh ? await refreshAndResend(state, { ...exchange, token }, outcome, attempt) : outcome;
  if (!settled.ok && !state.tokensSent.has(settled)) state.tokensSent.set(settled, [token]);
  return settled;
}

/** `onResponse` of {@link unauthorizedRetryMiddleware}: a 401 to an API request that carried a token and can be sent again. */
function answer401(
  state: SendState,
  kept: WeakMap<object, ReplayBody>,
  { request, response, options }: { request: Request; response: Response; options: { fetch: unknown } },
): Promise<Response | undefined> | undefined {
  const token = response.status === 401 && inScope(request.url, state.prefix) ? bearerTokenOf(request) : undefined;
  const body = keptFor(kept, request, options);
  if (token === undefined || body === undefined) return undefined;
  const exchange = { fetch: options.fetch as Exchange["fetch"], request, token, body };
  return refreshAndResend(state, exchange, response, 1).then((settled) => (settled === response ? undefined : settled));
}

/**
 * Middleware that answers a 401 to a request that carried a bearer token for the tenant's API: it
 * calls `auth.onUnauthorized(rejectedToken)` once, asks `auth.getAccessToken()` again and, if the
 * token differs, sends the request once more with the same method, headers and body (the tenant
 * client keeps the serialized body; on a plain openapi-fetch client a copy is read before the first
 * send). A request with a streamed body (a `ReadableStream`) is not sent again: its 401 is returned.
 * A second 401 is returned as is. Other requests are untouched.
 * The retry goes straight to the client's fetch and, like {@link bearerMiddleware}, follows no
 * redirect: a 3xx comes back as it is.
 *
 * @param options - the tenant base URL and the token source
 * @returns an openapi-fetch middleware
 * @throws {@link TenantClientError} `INVALID_OPTIONS` (synchronously) for an unacceptable `baseUrl`
 * @throws {@link TenantClientError} `INVALID_TOKEN`, or {@link NetworkError} when the retry cannot be sent (from the request)
 * @example
 * ```ts
 * client.use(unauthorizedRetryMiddleware({ baseUrl, auth }), bearerMiddleware({ baseUrl, auth }));
 * ```
 * @see RFC 6750 §3.1 (`invalid_token` is answered with 401)
 * @see RFC 6749 §6 (refreshing an access token)
 */
export function unauthorizedRetryMiddleware(options: UnauthorizedRetryMiddlewareOptions): Middleware {
  const state = sendState({ prefix: apiPrefix(options.baseUrl), auth: options.auth });
  const kept = new WeakMap<object, ReplayBody>();
  return {
    onRequest: keepCopy.bind(null, kept, (request) => inScope(request.url, state.prefix)),
    onResponse: answer401.bind(null, state, kept),
  };
}
