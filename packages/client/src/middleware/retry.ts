import type { Middleware } from "openapi-fetch";
import type { NetworkError } from "../errors.js";
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
  /**
   * Called before each retry is waited for, e.g. to count attempts in metrics (user middleware sees
   * only the call's first request and last response). Whatever it throws ends the call.
   */
  readonly onRetry?: (info: RetryInfo) => void;
}

/**
 * What {@link RetryOptions.onRetry} is told about a retry about to be made.
 *
 * @example
 * ```ts
 * createTenantClient({ baseUrl, auth, onRetry: ({ attempt, status, error, delayMs }) => metrics.count("retry", { attempt, status, code: error?.code, delayMs }) });
 * ```
 * @see RFC 9110 §10.2.3 (Retry-After), §9.2.2 (idempotent methods)
 */
export interface RetryInfo {
  /** The number of the attempt about to be sent: 2 for the first retry. */
  readonly attempt: number;
  /** The status that is being retried (429 or 5xx), when the previous attempt got an answer. */
  readonly status?: number | undefined;
  /** The failure that is being retried, when the previous attempt got no answer (code `NETWORK_ERROR`). */
  readonly error?: NetworkError | undefined;
  /** How long the client waits before sending, in ms (the `Retry-After` delay, or the jittered backoff). */
  readonly delayMs: number;
  /** The method of the request that will be sent again. */
  readonly method: string;
  /**
   * Its path, without the query. The request itself is not given: it carries the `Authorization`
   * header, and whatever logs or prints `info` must never see a token.
   */
  readonly path: string;
}

/**
 * Middleware that sends an idempotent request (GET, HEAD, OPTIONS, PUT, DELETE) again when the
 * server answers 429 or a 5xx (but 501 and 505), or when the connection failed (not on an abort or
 * a timeout), up to `retries` times, waiting the `Retry-After` delay (seconds or an HTTP date) or
 * else `d/2 + random·d/2` with `d = min(maxDelayMs, baseDelayMs·2^n)`. A `Retry-After` beyond
 * `maxDelayMs` stops the retries. POST and PATCH are never retried. An aborted signal ends the
 * waiting and returns the last response. The tenant client keeps the serialized body for a retry;
 * on a plain openapi-fetch client a copy is read before the first send. A streamed body (a
 * `ReadableStream`) can be sent once only: its request is never retried. Retries go
 * straight to the client's fetch, not through other middleware (`onRetry` tells you about each).
 * Redirects are never followed by a retry: a 3xx comes back as it is.
 *
 * @param options - see {@link RetryOptions}
 * @returns an openapi-fetch middleware
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
  return coreMiddleware({ prefix: undefined, retry: options, parts: {} });
}
