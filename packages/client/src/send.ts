/**
 * The tenant client's `fetch`: what openapi-fetch calls once every middleware of the caller (the
 * client's, then the call's own) has run, so it sees the final request, and what those middleware's
 * `onResponse` see the answer of, after retries and the refresh-and-retry. Its steps, each the
 * concern of a module of `middleware/`:
 *
 * 1. `client.raw` sends nothing outside `/api/v1` of the tenant ({@link PathOutsideApiError});
 * 2. an API request gets the token (`bearer.ts`); others are sent as they are;
 * 3. a request that may be sent again keeps its body (`replay.ts`);
 * 4. it is sent (`attempt.ts`), and a failed fetch becomes a {@link NetworkError} (`network-error.ts`);
 * 5. under a retry policy, a 429, a 5xx or a failed connection is sent again (`attempt.ts`, `retry.ts`);
 * 6. a 401 to a request that carried the token gets the one refresh-and-retry (`unauthorized-retry.ts`).
 *
 * The common case (an API request, the token already accepted, a 2xx or an error not worth a retry)
 * takes one synchronous step before the fetch and one after it.
 */
import { inScope } from "./base-url.js";
import type { ClientState, Fetch } from "./client-state.js";
import { PathOutsideApiError, TenantClientError } from "./errors.js";
import { logOutcome, type Outcome, retryAttempts } from "./middleware/attempt.js";
import { authorize, currentToken } from "./middleware/bearer.js";
import { networkError } from "./middleware/network-error.js";
import { type Exchange, type KeptBody, type ReplayBody, replayBody } from "./middleware/replay.js";
import { settle } from "./middleware/unauthorized-retry.js";

/** What `send` needs of a call that brings more than a path: `raw`'s rule, its own `fetch`, its kept body. */
export interface Call extends KeptBody {
  /** `client.raw`: nothing outside `/api/v1` of the tenant is sent. */
  readonly raw: boolean;
  /** The call's own `fetch` option, if any. */
  readonly fetch: Fetch | undefined;
}

/**
 * Sends `request` (of `call`, when the call brought more than a path) and resolves its last answer;
 * rejects with a {@link NetworkError} when it got none, and with what the token source throws.
 */
export function send(state: ClientState, call: Call | undefined, request: Request): Promise<Response> {
  const scoped = inScope(request.url, state.prefix);
  if (call?.raw && !scoped) return Promise.reject(new PathOutsideApiError(request.url));
  const fetch = call?.fetch ?? state.fetch;
  if (!scoped) return start(state, call, fetch, request, undefined);
  const token = currentToken(state.bearer, state.log, request);
  return typeof token === "string"
    ? start(state, call, fetch, authorize(request, token), token)
    : token.then((value) => start(state, call, fetch, authorize(request, value), value));
}

/** Keeps the body a replay may need (reading a copy only when it must), then sends the first attempt. */
function start(
  state: ClientState,
  call: Call | undefined,
  fetch: Fetch,
  request: Request,
  token: string | undefined,
): Promise<Response> {
  const mayReplay = token !== undefined || state.retry?.mayRetry(request) === true;
  const body = replayBody(request, call, mayReplay, state.log);
  return body instanceof Promise
    ? body.then((kept: ReplayBody) => firstAttempt(state, { fetch, request, token, body: kept }))
    : firstAttempt(state, { fetch, request, token, body });
}

/** Sends the exchange's request once; its answer or failure goes to {@link answered} or {@link failed}. */
function firstAttempt(state: ClientState, exchange: Exchange): Promise<Response> {
  const started = state.log ? performance.now() : 0;
  let sent: Promise<Response>;
  try {
    sent = exchange.fetch(exchange.request);
  } catch (cause) {
    sent = Promise.reject(cause);
  }
  return sent.then(
    (response) => answered(state, exchange, response, started),
    (cause: unknown) => failed(state, exchange, cause, started),
  );
}

/** The first answer: returned as it is (the common case, synchronously), or retried and settled. */
function answered(
  state: ClientState,
  exchange: Exchange,
  response: Response,
  started: number,
): Response | Promise<Response> {
  const { log, retry, tokensSent } = state;
  const { request, token } = exchange;
  if (log) logOutcome(log, request, response, 1, started);
  const retryNow = exchange.body !== undefined && retry?.worthRetrying(request, response) === true;
  if (retryNow || (response.status === 401 && token !== undefined)) return further(state, exchange, response, retryNow);
  if (!response.ok && token !== undefined) tokensSent.set(response, [token]);
  return response;
}

/** A first attempt that got no answer: a {@link NetworkError}, unless a retry gets one. */
function failed(state: ClientState, exchange: Exchange, cause: unknown, started: number): Promise<Response> {
  // the client's own errors (a token source's TenantClientError in a user's fetch) pass as they are
  if (cause instanceof TenantClientError) return Promise.reject(cause);
  const { log, retry } = state;
  const failure = networkError(exchange.request, cause);
  if (log) logOutcome(log, exchange.request, failure, 1, started);
  if (exchange.body === undefined || retry?.worthRetrying(exchange.request, failure) !== true)
    return Promise.reject(failure);
  return further(state, exchange, failure, true);
}

/** Retries `first` when `retryNow`, then settles the last outcome (the refresh-and-retry of a 401). */
async function further(state: ClientState, exchange: Exchange, first: Outcome, retryNow: boolean): Promise<Response> {
  const [outcome, attempt] = retryNow ? await retryAttempts(state, exchange, first) : [first, 1];
  return settle(state, exchange, outcome, attempt);
}
