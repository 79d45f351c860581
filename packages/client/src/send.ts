/**
 * The tenant client's `fetch`: what openapi-fetch calls once every middleware of the caller (the
 * client's, then the call's own) has run, so it sees the final request, and what those middleware's
 * `onResponse` see the answer of, after retries and the refresh-and-retry. Its steps, each the
 * concern of a module of `middleware/`, taken once each and in this order:
 *
 * 1. `client.raw` sends nothing outside `/api/v1` of the tenant ({@link PathOutsideApiError});
 * 2. an API request gets the token (`bearer.ts`); others are sent as they are;
 * 3. a request that may be sent again keeps its body (`replay.ts`);
 * 4. it is sent and logged (`attempt.ts`), and a failed fetch becomes a {@link NetworkError} (`network-error.ts`);
 * 5. under a retry policy, a 429, a 5xx or a failed connection is sent again (`attempt.ts`, `retry.ts`);
 * 6. the last answer is settled: a 401 to a request that carried the token gets the one
 *    refresh-and-retry (`unauthorized-retry.ts`).
 *
 * The common case (an API request, the token already accepted, a 2xx) takes one synchronous step
 * before the fetch and one after it.
 */
import { inScope } from "./base-url.js";
import type { ClientState, Fetch } from "./client-state.js";
import { PathOutsideApiError, TenantClientError } from "./errors.js";
import { logOutcome, type Outcome, retryAttempts } from "./middleware/attempt.js";
import { giveToken } from "./middleware/bearer.js";
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

/** An exchange while `send` prepares it: the token (`bearer.ts`) and the kept body (`replay.ts`) join it as they are known. */
type Outgoing = { -readonly [K in keyof Exchange]: Exchange[K] };

/**
 * Sends `request` (of `call`, when the call brought more than a path) and resolves its last answer;
 * rejects with a {@link NetworkError} when it got none, and with what the token source throws.
 *
 * Steps 1 to 3 are taken here, each once: the scope, the token (asked only for an API request) and
 * the body (kept only for a request that may be sent again: one that carries the token, or one the
 * retry policy may repeat). Either may have to wait; the request leaves once both are known.
 */
export function send(state: ClientState, call: Call | undefined, request: Request): Promise<Response> {
  const scoped = inScope(request.url, state.prefix);
  if (call?.raw && !scoped) return Promise.reject(new PathOutsideApiError(request.url));
  const exchange: Outgoing = { fetch: call?.fetch ?? state.fetch, request, token: undefined, body: undefined };
  const tokenGiven = scoped ? giveToken(state.bearer, state.log, exchange) : undefined;
  const mayReplay = scoped || state.retry?.mayRetry(request) === true;
  const body = replayBody(exchange.request, call, mayReplay, state.log);
  if (tokenGiven === undefined && !(body instanceof Promise)) return firstAttempt(state, exchange, body);
  return Promise.all([tokenGiven, body]).then(([, kept]) => firstAttempt(state, exchange, kept));
}

/**
 * Sends the exchange's request once, with its token and `body` known (at once in the common case);
 * its answer or failure goes to {@link firstOutcome}.
 */
function firstAttempt(state: ClientState, exchange: Outgoing, body: ReplayBody): Promise<Response> {
  exchange.body = body;
  const { fetch, request } = exchange;
  const started = state.log ? performance.now() : 0;
  let sent: Promise<Response>;
  try {
    sent = fetch(request);
  } catch (cause) {
    sent = Promise.reject(cause);
  }
  return sent.then(
    (response) => firstOutcome(state, exchange, response, started),
    // the client's own errors (a token source's TenantClientError in a user's fetch) pass as they are
    (cause: unknown) =>
      cause instanceof TenantClientError
        ? Promise.reject(cause)
        : firstOutcome(state, exchange, networkError(request, cause), started),
  );
}

/**
 * What the first attempt came to, logged: a 2xx, or any answer to a request without the token,
 * returned as it is (the common case, synchronously); else retried when worth it (steps 5) and
 * settled (step 6).
 */
function firstOutcome(
  state: ClientState,
  exchange: Exchange,
  first: Outcome,
  started: number,
): Response | Promise<Response> {
  if (state.log) logOutcome(state.log, exchange.request, first, 1, started);
  const retryNow = exchange.body !== undefined && state.retry?.worthRetrying(exchange.request, first) === true;
  if (!retryNow && first instanceof Response && (first.ok || exchange.token === undefined)) return first;
  const last = retryNow ? retryAttempts(state, exchange, first) : ([first, 1] as const);
  return Promise.resolve(last).then(([outcome, attempt]) => settle(state, exchange, outcome, attempt));
}
