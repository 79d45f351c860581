import type { Middleware, MiddlewareCallbackParams } from "openapi-fetch";
import { createApiScope, type ApiScope } from "../api-scope.js";
import { validateBaseUrl } from "../base-url.js";
import { captureBody, followIntent, rebuild, send, storedBody, discard } from "../internal/replay.js";
import { parseRetryAfter } from "../retry-after.js";

/** Options of {@link retryMiddleware}. Every field is optional. */
export interface RetryOptions {
  /** How many times a request is sent again after the first answer. Default `2`. `0` turns retries off. */
  readonly retries?: number;
  /** The backoff before the first retry; it doubles on every retry. Default `300` ms. */
  readonly baseDelayMs?: number;
  /**
   * The longest single wait. Default `10_000` ms. The backoff is capped at it; a `Retry-After` longer
   * than it ends the retries and the response is returned, so the caller can decide when to come back.
   */
  readonly maxDelayMs?: number;
  /** Waits `ms` milliseconds; injected by tests. Default: a timer that ends early when `signal` aborts. */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** A random number in [0, 1) for the jitter; injected by tests. Default `Math.random`. */
  readonly random?: () => number;
  /** The current time in ms since the epoch, to read a `Retry-After` date; injected by tests. Default `Date.now`. */
  readonly now?: () => number;
  /**
   * The tenant's base URL. When given, a retried request that is redirected keeps its token only
   * while the target stays under `/api/v1`; without it the token is dropped on every redirect hop.
   */
  readonly baseUrl?: string;
}

/** Defaults of {@link RetryOptions}. */
export const retryDefaults = { retries: 2, baseDelayMs: 300, maxDelayMs: 10_000 } as const;

const IDEMPOTENT = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE"]);

/** 429 and 5xx, except 501 and 505 which say the request can never succeed (RFC 9110 §15.6.2, §15.6.6). */
function retryable(status: number): boolean {
  return status === 429 || (status >= 500 && status <= 599 && status !== 501 && status !== 505);
}

function defaultSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/**
 * Middleware that sends an idempotent request (GET, HEAD, OPTIONS, PUT, DELETE) again when the
 * server answers 429 or a 5xx (but 501 and 505), up to `retries` times. Before each retry it waits:
 * the `Retry-After` delay when the response has one (seconds or an HTTP date), otherwise a capped
 * exponential backoff with jitter, `d/2 + random·d/2` where `d = min(maxDelayMs, baseDelayMs·2^n)`.
 * A `Retry-After` beyond `maxDelayMs` stops the retries and the response is returned. POST and PATCH
 * are never retried. An aborted signal ends the waiting and returns the last response.
 *
 * Bodies (of PUT and DELETE) are buffered before the first send, so every retry sends the same bytes.
 * Retries go straight to the client's fetch, not through other middleware.
 *
 * @param options - see {@link RetryOptions}; all optional
 * @returns an openapi-fetch middleware
 * @throws {@link NetworkError} (from the request) when a retry cannot be sent
 * @example
 * ```ts
 * import createClient from "openapi-fetch";
 * const client = createClient<paths>({ baseUrl });
 * client.use(retryMiddleware({ retries: 3, baseDelayMs: 200, maxDelayMs: 5_000 }));
 * ```
 * @see RFC 9110 §10.2.3 (Retry-After)
 * @see RFC 9110 §9.2.2 (idempotent methods)
 * @see RFC 6585 §4 (429 Too Many Requests)
 */
export function retryMiddleware(options: RetryOptions = {}): Middleware {
  const retries = Math.max(0, Math.floor(options.retries ?? retryDefaults.retries));
  const baseDelayMs = Math.max(0, options.baseDelayMs ?? retryDefaults.baseDelayMs);
  const maxDelayMs = Math.max(0, options.maxDelayMs ?? retryDefaults.maxDelayMs);
  const sleep = options.sleep ?? defaultSleep;
  const random = options.random ?? Math.random;
  const now = options.now ?? Date.now;
  const scope: ApiScope | undefined = options.baseUrl === undefined ? undefined : createApiScope(validateBaseUrl(options.baseUrl));

  function delayFor(response: Response, attempt: number): number | undefined {
    const retryAfter = parseRetryAfter(response.headers.get("retry-after"), now());
    if (retryAfter !== undefined) return retryAfter > maxDelayMs ? undefined : retryAfter;
    const d = Math.min(maxDelayMs, baseDelayMs * 2 ** attempt);
    return d / 2 + random() * (d / 2);
  }

  return {
    // synchronous on the hot path: no promise unless there is a body to keep or a status to retry
    onRequest(params) {
      if (retries > 0 && params.request.body !== null && IDEMPOTENT.has(params.request.method)) return captureBody(params).then(() => undefined);
      return undefined;
    },
    onResponse(params) {
      if (retries === 0 || !retryable(params.response.status) || !IDEMPOTENT.has(params.request.method)) return undefined;
      return retry(params);
    },
  };

  async function retry(params: MiddlewareCallbackParams & { response: Response }): Promise<Response | undefined> {
    const { request } = params;
    let response = params.response;
    const body = storedBody(params);
    if (body === undefined) return undefined;
    const follow = followIntent.has(request) || request.redirect === "follow";
    for (let attempt = 0; attempt < retries && retryable(response.status); attempt++) {
      const delay = delayFor(response, attempt);
      if (delay === undefined || request.signal.aborted) break;
      await sleep(delay, request.signal);
      if (request.signal.aborted) break;
      discard(response);
      response = await send(params.options.fetch, rebuild(request, body), body, follow, scope);
    }
    return response;
  }
}
