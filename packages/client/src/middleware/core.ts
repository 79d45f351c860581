/**
 * Internal: the one implementation behind every middleware of this package. `createTenantClient`
 * registers a single instance with every part switched on, so openapi-fetch runs one hook per
 * phase; the exported factories (`bearerMiddleware`, …) are the same code with one part on, usable
 * on their own with a plain `createClient`.
 *
 * Hot path (a GET answered 2xx, no logger): `onRequest` and `onResponse` return synchronously, and
 * `getAccessToken()` is awaited only when it returns a promise other than the one already seen
 * resolved (a resolved promise cannot change its value).
 */
import type { Middleware, MiddlewareCallbackParams } from "openapi-fetch";
import type { AuthStrategy } from "../auth-strategy.js";
import { inScope } from "../base-url.js";
import { bearerTokenOf, NetworkError, TenantClientError, TimeoutError } from "../errors.js";
import { type Log, pathOf } from "../logger.js";
import { parseRetryAfter } from "../retry-after.js";
import type { RetryInfo, RetryOptions } from "./retry.js";

/** The parts of the middleware, each switched on by name. */
export interface CoreParts {
  /** Add `Authorization: Bearer <token>` to requests under the API prefix. */
  readonly bearer?: boolean;
  /** Answer a 401 by asking the strategy for a new token and sending once more. */
  readonly unauthorized?: boolean;
  /** Turn a rejected fetch into a thrown {@link NetworkError}. */
  readonly network?: boolean;
}

/** What the core middleware is built from. */
export interface CoreOptions {
  /** The tenant's API prefix (from `apiPrefix`), or `undefined` (no request is in scope). */
  readonly prefix: string | undefined;
  /** The strategy (needed by the bearer and unauthorized parts). */
  readonly auth?: AuthStrategy | undefined;
  /** The retry policy, or `undefined` for no retries. */
  readonly retry?: RetryOptions | undefined;
  /** Which parts are on. */
  readonly parts: CoreParts;
  /** Where to log, already filtered by level; `undefined` writes nothing. */
  readonly log?: Log | undefined;
}

type Params = MiddlewareCallbackParams & { response: Response };
type Fetch = (request: Request) => Promise<Response>;

/** The outcome of the last attempt made, and its number (1 for the first send). */
interface Attempted {
  readonly outcome: Response | NetworkError;
  readonly attempt: number;
}

/** What one call (one `client.GET(…)`) keeps between its hooks, keyed by openapi-fetch's per-call `options`. */
interface Call {
  /** The request body, read before the first send, when the request may be sent again. */
  body?: ArrayBuffer;
  /** When the current attempt was sent (`performance.now()`), for the log line. */
  sentAt: number;
  /** A response our `onError` produced by retrying: `onResponse` then has nothing left to do. */
  recovered?: Response;
}
const calls = new WeakMap<object, Call>();

/**
 * The tokens sent for each non-2xx response the middleware returned, so that the client can
 * remove them from the error value's headers and body.
 */
export const tokensSentFor = new WeakMap<Response, readonly string[]>();

/** Methods that are safe to send again (RFC 9110 §9.2.2). */
const IDEMPOTENT = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE"]);

/** RFC 6750 §2.1: what a bearer token may look like. */
const B64TOKEN = /^[\w\-.~+/]+=*$/;

/** 429 and 5xx, except 501 and 505, which say the request can never succeed (RFC 9110 §15.6.2, §15.6.6). */
function isRetryableStatus(status: number): boolean {
  if (status === 501 || status === 505) return false;
  return status === 429 || (status >= 500 && status <= 599);
}

/** A network failure worth another attempt: not an abort or a timeout, which the caller asked for. */
function isRetryableFailure(failure: NetworkError): boolean {
  return failure.code === "NETWORK_ERROR";
}

/** Releases a replaced response's body; not awaited (a cancelled tee branch settles late). */
function discard(response: Response): void {
  void response.body?.cancel().catch(() => undefined);
}

function sleepDefault(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/** The thrown error for a rejected fetch: a TimeoutError when a timeout aborted it. */
function networkError(request: Request, cause: unknown): NetworkError {
  const timedOut = (cause as Error | null)?.name === "TimeoutError" || (request.signal.reason as Error | undefined)?.name === "TimeoutError";
  return timedOut ? new TimeoutError(request, cause) : new NetworkError(request, cause);
}

/** A fresh copy of a (possibly sent) request with its kept body, and a new token if given. */
function rebuild(request: Request, body: ArrayBuffer | undefined, token?: string): Request {
  const headers = new Headers(request.headers);
  if (token) headers.set("authorization", `Bearer ${token}`);
  return new Request(request, { headers, body: body ?? null });
}

/** Builds the middleware; see {@link CoreOptions}. */
export function coreMiddleware({ prefix, auth, retry, parts, log }: CoreOptions): Middleware {
  const retries = retry?.retries ?? 2;
  const baseDelay = retry?.baseDelayMs ?? 300;
  const maxDelay = retry?.maxDelayMs ?? 10_000;
  const sleep = retry?.sleep ?? sleepDefault;
  const random = retry?.random ?? Math.random;
  const now = retry?.now ?? Date.now;
  const retriesOn = retry !== undefined && retries > 0;
  // the last token promise seen resolved, and its valid value
  let seenPromise: unknown;
  let token = "";

  const mayRetry = (request: Request): boolean => retriesOn && IDEMPOTENT.has(request.method);

  // A request that carries the token must not follow redirects (RFC 6750 §5.2): the tenant client
  // creates API requests in "manual" mode already; on a plain client this costs one more Request.
  const authorize = (request: Request, value: string): Request | undefined => {
    const manual = request.redirect === "follow" ? new Request(request, { redirect: "manual" }) : undefined;
    (manual ?? request).headers.set("authorization", `Bearer ${value}`);
    return manual;
  };

  const freshToken = async (pending = auth!.getAccessToken()): Promise<string> => {
    const value = await pending;
    if (typeof value !== "string" || !B64TOKEN.test(value)) throw new TenantClientError("INVALID_TOKEN", "Invalid token");
    seenPromise = pending;
    token = value;
    return value;
  };

  const withToken = (request: Request): Request | undefined | Promise<Request | undefined> => {
    const pending = auth!.getAccessToken();
    // same promise as last time: it resolved to `token`, so no await is needed
    if (pending === seenPromise) return authorize(request, token);
    log?.debug({ method: request.method, path: pathOf(request.url) }, "asking the auth strategy for a token");
    return freshToken(pending).then((value) => authorize(request, value));
  };

  const logAttempt = (request: Request, status: number, sentAt: number, attempt: number): void => {
    if (!log) return;
    const durationMs = Math.round(performance.now() - sentAt);
    const path = pathOf(request.url);
    log.info({ method: request.method, path, status, durationMs, attempt }, `${request.method} ${path} ${status} ${durationMs}ms (attempt ${attempt})`);
  };

  const logFailure = (request: Request, failure: NetworkError, sentAt: number, attempt: number): void => {
    if (!log) return;
    const durationMs = Math.round(performance.now() - sentAt);
    const path = pathOf(request.url);
    log.error(
      { method: request.method, path, error: failure.name, code: failure.code, durationMs, attempt },
      `${request.method} ${path} failed: ${failure.code} after ${durationMs}ms (attempt ${attempt})`,
    );
  };

  /** Sends one more attempt straight to fetch; a rejection comes back as a NetworkError, logged. */
  const sendAttempt = async (fetch: Fetch, request: Request, call: Call, attempt: number): Promise<Response | NetworkError> => {
    call.sentAt = performance.now();
    try {
      const response = await fetch(request);
      logAttempt(request, response.status, call.sentAt, attempt);
      return response;
    } catch (cause) {
      const failure = networkError(request, cause);
      logFailure(request, failure, call.sentAt, attempt);
      return failure;
    }
  };

  /** The wait before retry number `retry` (0-based) after `outcome`, or `undefined` if no retry. */
  const delayBefore = (outcome: Response | NetworkError, retryIndex: number): number | undefined => {
    const retryable = outcome instanceof Response ? isRetryableStatus(outcome.status) : isRetryableFailure(outcome);
    if (!retryable) return undefined;
    const retryAfter = outcome instanceof Response ? parseRetryAfter(outcome.headers.get("retry-after"), now()) : undefined;
    const backoff = Math.min(maxDelay, baseDelay * 2 ** retryIndex);
    const jittered = backoff / 2 + (random() * backoff) / 2;
    const delay = retryAfter ?? jittered;
    // the server asks for longer than we wait: return its answer
    return delay > maxDelay ? undefined : delay;
  };

  /**
   * Retries `first` (an answer or a failure of attempt 1) while retries are left and worthwhile;
   * returns the last outcome and the number of the attempt that produced it. An aborted signal (the
   * caller's, or the client's timeout) ends the waiting: the last outcome is returned.
   */
  const retryLoop = async (fetch: Fetch, request: Request, call: Call, first: Response | NetworkError): Promise<Attempted> => {
    let outcome = first;
    let lastAttempt = 1;
    for (let retryIndex = 0; retryIndex < retries && !request.signal.aborted; retryIndex++) {
      const delayMs = delayBefore(outcome, retryIndex);
      if (delayMs === undefined) break;
      const attempt = retryIndex + 2;
      const status = outcome instanceof Response ? outcome.status : undefined;
      const error = outcome instanceof NetworkError ? outcome : undefined;
      const path = pathOf(request.url);
      log?.warn(
        { method: request.method, path, status, error: error?.code, delayMs: Math.round(delayMs), attempt },
        `${request.method} ${path} ${status ?? error?.code}: retry in ${Math.round(delayMs)}ms (attempt ${attempt})`,
      );
      retry?.onRetry?.({ attempt, status, error, delayMs, method: request.method, path } satisfies RetryInfo);
      await sleep(delayMs, request.signal);
      if (request.signal.aborted) break;
      if (outcome instanceof Response) discard(outcome);
      outcome = await sendAttempt(fetch, rebuild(request, call.body), call, attempt);
      lastAttempt = attempt;
    }
    return { outcome, attempt: lastAttempt };
  };

  /**
   * After a 401 to a request that carried our token: tell the strategy, get a new token and send
   * once more if it differs. A strategy that fails here (the session ended) is logged and its
   * error reaches the caller unchanged.
   */
  const answerUnauthorized = async (fetch: Fetch, request: Request, call: Call, response: Response, rejected: string, attempt: number): Promise<Response> => {
    const path = pathOf(request.url);
    log?.info({ method: request.method, path }, `${request.method} ${path} 401: refreshing the token through the auth strategy`);
    let next: string;
    try {
      await auth!.onUnauthorized?.(rejected);
      next = await freshToken();
    } catch (failure) {
      const code = (failure as { code?: unknown } | null)?.code;
      log?.warn({ method: request.method, path, error: (failure as Error | null)?.name, code }, "session ended: the auth strategy could not give a new token");
      throw failure;
    }
    if (next === rejected) {
      log?.warn({ method: request.method, path }, `${request.method} ${path} 401: the auth strategy has no new token; returning the 401`);
      return response;
    }
    log?.info({ method: request.method, path }, `${request.method} ${path}: token refreshed, sending again`);
    discard(response);
    const outcome = await sendAttempt(fetch, rebuild(request, call.body, next), call, attempt + 1);
    if (outcome instanceof NetworkError) throw outcome;
    tokensSentFor.set(outcome, [rejected, next]);
    return outcome;
  };

  const middleware: Middleware = {
    onRequest({ request, options }) {
      const scoped = (parts.bearer || parts.unauthorized) && inScope(request.url, prefix);
      const addToken = parts.bearer && scoped;
      const call: Call = { sentAt: performance.now() };
      calls.set(options, call);
      // keep a replayable copy of the body when a 401 or a retry may have to send it again
      const mayReplay = (parts.unauthorized && scoped) || mayRetry(request);
      if (request.body !== null && mayReplay) {
        log?.debug({ method: request.method, path: pathOf(request.url) }, "keeping the request body for a possible retry");
        return request
          .clone()
          .arrayBuffer()
          .then((body) => {
            call.body = body;
            return addToken ? withToken(request) : undefined;
          })
          .finally(() => markSent(call));
      }
      if (!addToken) return undefined;
      const authorized = withToken(request);
      // a token that had to be awaited: the attempt starts once it is there
      if (authorized instanceof Promise) return authorized.finally(() => markSent(call));
      return authorized;
    },

    onResponse(params) {
      const { request, response, options } = params;
      const call = calls.get(options);
      // a response our onError recovered by retrying has been logged and handled already
      if (call === undefined || call.recovered === response) return undefined;
      logAttempt(request, response.status, call.sentAt, 1);
      const needsRetry = mayRetry(request) && isRetryableStatus(response.status);
      const needsToken = response.status === 401 && parts.unauthorized;
      if (!needsRetry && !needsToken) {
        if (!response.ok) rememberToken(response, request);
        return undefined;
      }
      return answer(params, call);
    },

    onError({ request, error, options }) {
      if (error instanceof TenantClientError) return error;
      const call = calls.get(options) ?? { sentAt: performance.now() };
      const failure = networkError(request, error);
      logFailure(request, failure, call.sentAt, 1);
      if (mayRetry(request) && isRetryableFailure(failure)) {
        const fetch = options.fetch as Fetch;
        return retryLoop(fetch, request, call, failure).then(async ({ outcome, attempt }) => {
          // without the network part, the original error goes on unchanged, as without retries
          if (outcome instanceof NetworkError) return parts.network ? outcome : undefined;
          const settled = await settle(fetch, request, call, outcome, attempt);
          call.recovered = settled;
          return settled;
        });
      }
      return parts.network ? failure : undefined;
    },
  };
  return middleware;

  function markSent(call: Call): void {
    call.sentAt = performance.now();
  }

  function rememberToken(response: Response, request: Request): void {
    const sent = bearerTokenOf(request);
    if (sent) tokensSentFor.set(response, [sent]);
  }

  async function answer({ request, response, options }: Params, call: Call): Promise<Response | undefined> {
    const fetch = options.fetch as Fetch;
    const replayable = request.body === null || call.body !== undefined;
    let outcome: Response | NetworkError = response;
    let attempt = 1;
    if (mayRetry(request) && replayable) ({ outcome, attempt } = await retryLoop(fetch, request, call, response));
    if (outcome instanceof NetworkError) throw outcome;
    const settled = await settle(fetch, request, call, outcome, attempt);
    return settled === response ? undefined : settled;
  }

  /** The last step for an answer: the one refresh-and-retry after a 401, and the token sent remembered for an error value. */
  async function settle(fetch: Fetch, request: Request, call: Call, response: Response, attempt: number): Promise<Response> {
    const rejected = bearerTokenOf(request);
    const replayable = request.body === null || call.body !== undefined;
    const unauthorized = parts.unauthorized && response.status === 401 && rejected !== undefined && replayable && inScope(request.url, prefix);
    const settled = unauthorized ? await answerUnauthorized(fetch, request, call, response, rejected, attempt) : response;
    if (!settled.ok && !tokensSentFor.has(settled)) rememberToken(settled, request);
    return settled;
  }
}
