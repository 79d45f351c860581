import type { Middleware } from "openapi-fetch";
import { apiPrefix } from "../base-url.js";
import { coreMiddleware } from "./core.js";

/** Options of {@link retryMiddleware}. Every field is optional. */
export interface RetryOptions {
  /** How many times a request is sent again after the first answer. Default `2`; `0` turns retries off. */
  readonly retries?: number;
  /** The backoff before the first retry; it doubles on every retry. Default `300` ms. */
  readonly baseDelayMs?: number;
  /** The longest wait. Default `10_000` ms. A longer `Retry-After` ends the retries: the response is returned. */
  readonly maxDelayMs?: number;
  /** Waits `ms` milliseconds (tests inject it). Default: a timer that ends early when `signal` aborts. */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** A random number in [0, 1) for the jitter (tests inject it). Default `Math.random`. */
  readonly random?: () => number;
  /** The time in ms since the epoch, to read a `Retry-After` date (tests inject it). Default `Date.now`. */
  readonly now?: () => number;
  /** The tenant's base URL: a redirected retry keeps its token only while under `/api/v1`. Without it the token is dropped on every hop. */
  readonly baseUrl?: string;
}

/**
 * Middleware that sends an idempotent request (GET, HEAD, OPTIONS, PUT, DELETE) again when the
 * server answers 429 or a 5xx (but 501 and 505), up to `retries` times, waiting the `Retry-After`
 * delay (seconds or an HTTP date) or else `d/2 + random·d/2` with `d = min(maxDelayMs, baseDelayMs·2^n)`.
 * A `Retry-After` beyond `maxDelayMs` stops the retries. POST and PATCH are never retried. An aborted
 * signal ends the waiting and returns the last response. Bodies are buffered before the first send;
 * retries go straight to the client's fetch, not through other middleware.
 *
 * @param options - see {@link RetryOptions}
 * @returns an openapi-fetch middleware
 * @throws {@link TenantClientError} `INVALID_BASE_URL` (synchronously) for an unacceptable `baseUrl`
 * @throws {@link NetworkError} (from the request) when a retry cannot be sent
 * @example
 * ```ts
 * import createClient from "openapi-fetch";
 * const client = createClient<paths>({ baseUrl });
 * client.use(retryMiddleware({ retries: 3, baseDelayMs: 200, maxDelayMs: 5_000 }));
 * ```
 * @see RFC 9110 §10.2.3 (Retry-After), §9.2.2 (idempotent methods)
 * @see RFC 6585 §4 (429 Too Many Requests)
 */
export function retryMiddleware(options: RetryOptions = {}): Middleware {
  return coreMiddleware(options.baseUrl === undefined ? undefined : apiPrefix(options.baseUrl), undefined, options, 0);
}
