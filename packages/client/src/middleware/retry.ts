/**
 * The retry concern, opt-in: the policy ({@link retryPolicy}) that sends an idempotent request again
 * after a 429, a 5xx or a failed connection, and its middleware for a plain openapi-fetch client. The
 * client imports this module only through `retryPolicy`, so an app without retries ships none of it.
 *
 * @see RFC 9110 §10.2.3 (Retry-After), §9.2.2 (idempotent methods); RFC 6585 §4 (429)
 */
import { parseRetryAfter } from "@tenant-integration/internal";
import type { Middleware } from "openapi-fetch";
import { type SendState, sendState } from "../client-state.js";
import { NetworkError, TenantClientError } from "../errors.js";
import type { Log } from "../logger.js";
import { type Outcome, retryAttempts } from "./attempt.js";
import { networkError } from "./network-error.js";
import { discard, type Exchange, keepCopy, keptFor, type ReplayBody } from "./replay.js";

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
 * A retry policy for the tenant client's `retry` option and {@link retryMiddleware}, made by
 * {@link retryPolicy}. The client imports the retry code only through it, so an app without
 * retries does not ship it.
 */
export interface RetryPolicy {
  /**
   * Internal: whether `request` may be sent again at all (an idempotent method, retries left).
   * @internal
   */
  readonly mayRetry: (request: Request) => boolean;
  /**
   * Internal: whether `outcome`, the answer or failure of `request`'s first attempt, is worth a retry.
   * @internal
   */
  readonly worthRetrying: (request: Request, outcome: Outcome) => boolean;
  /**
   * Internal: retries `first` (an answer or a failure of attempt 1) while retries are left and
   * worthwhile, sending with `send`; returns the last outcome and the number of its attempt.
   * @internal
   */
  readonly run: (
    request: Request,
    first: Outcome,
    send: (attempt: number) => Promise<Outcome>,
    log: Log | undefined,
    onRetry: ((info: RetryInfo) => void) | undefined,
  ) => Promise<[Outcome, number]>;
}

/** Methods that are safe to send again (RFC 9110 §9.2.2). */
const IDEMPOTENT = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE"]);

/** 429 and 5xx, except 501 and 505, which say the request can never succeed (RFC 9110 §15.6.2, §15.6.6). */
function isRetryableStatus(status: number): boolean {
  if (status === 501 || status === 505) return false;
  return status === 429 || (status >= 500 && status <= 599);
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

/**
 * The retry policy: an idempotent request (GET, HEAD, OPTIONS, PUT, DELETE) answered 429 or a 5xx
 * (but 501 and 505), or whose connection failed (not on an abort or a timeout), is sent again up to
 * `retries` times, waiting the `Retry-After` delay (seconds or an HTTP date) or else
 * `d/2 + random·d/2` with `d = min(maxDelayMs, baseDelayMs·2^n)`. A `Retry-After` beyond `maxDelayMs`
 * stops the retries. POST and PATCH are never retried. A request whose body is a stream is never
 * retried. An aborted signal ends the waiting and returns the last response.
 *
 * @param options - see {@link RetryOptions}; every field has a default (2 retries, 300 ms, 10 s)
 * @returns the policy, for `createTenantClient({ retry })`
 * @example
 * ```ts
 * const client = createTenantClient({ baseUrl, auth, retry: retryPolicy({ retries: 3, maxDelayMs: 5_000 }) });
 * ```
 * @see RFC 9110 §10.2.3 (Retry-After), §9.2.2 (idempotent methods)
 * @see RFC 6585 §4 (429 Too Many Requests)
 */
export function retryPolicy(options: RetryOptions = {}): RetryPolicy {
  const {
    retries = 2,
    baseDelayMs = 300,
    maxDelayMs = 10_000,
    sleep = sleepDefault,
    random = Math.random,
    now = Date.now,
  } = options;

  /** The wait before retry number `retryIndex` (0-based) after `outcome`, or `undefined` if no retry. */
  const delayBefore = (outcome: Outcome, retryIndex: number): number | undefined => {
    const answered = outcome instanceof Response;
    // a failure is retried only when the connection failed: an abort or a timeout was asked for
    const retryable = answered ? isRetryableStatus(outcome.status) : outcome.code === "NETWORK_ERROR";
    if (!retryable) return undefined;
    const backoff = Math.min(maxDelayMs, baseDelayMs * 2 ** retryIndex);
    const delay =
      (answered ? parseRetryAfter(outcome.headers.get("retry-after"), now()) : undefined) ??
      backoff / 2 + (random() * backoff) / 2;
    // the server asks for longer than we wait: return its answer
    return delay > maxDelayMs ? undefined : delay;
  };

  const mayRetry = (request: Request): boolean => retries > 0 && IDEMPOTENT.has(request.method);
  return {
    mayRetry,
    worthRetrying: (request, outcome) =>
      mayRetry(request) &&
      (outcome instanceof Response ? isRetryableStatus(outcome.status) : outcome.code === "NETWORK_ERROR"),

    async run(request, first, send, log, onRetry = options.onRetry) {
      let outcome = first;
      let attempt = 1;
      for (; attempt <= retries && !request.signal.aborted; attempt++) {
        const delayMs = delayBefore(outcome, attempt - 1);
        if (delayMs === undefined) break;
        const status = outcome instanceof Response ? outcome.status : undefined;
        const error = outcome instanceof NetworkError ? outcome : undefined;
        const next = attempt + 1;
        log?.("retry", request, { status, error: error?.code, delayMs: Math.round(delayMs), attempt: next });
        onRetry?.({
          attempt: next,
          status,
          error,
          delayMs,
          method: request.method,
          path: new URL(request.url).pathname,
        });
        await sleep(delayMs, request.signal);
        if (request.signal.aborted) break;
        if (outcome instanceof Response) discard(outcome);
        outcome = await send(next);
      }
      return [outcome, attempt];
    },
  };
}

/** What {@link retryMiddleware}'s hooks share: its state, the bodies it kept, the answers its `onError` made. */
interface RetryMiddlewareState {
  readonly state: SendState & { readonly retry: RetryPolicy };
  readonly kept: WeakMap<object, ReplayBody>;
  /** Answers its `onError` got by retrying: openapi-fetch hands them to every `onResponse`, which leaves them. */
  readonly recovered: WeakSet<Response>;
}

/** The exchange of a plain-client call, for a retry: `undefined` when its body was not kept. */
function exchangeOf(
  { kept }: RetryMiddlewareState,
  request: Request,
  options: { fetch: unknown },
): Exchange | undefined {
  const body = keptFor(kept, request, options);
  return body === undefined
    ? undefined
    : { fetch: options.fetch as Exchange["fetch"], request, token: undefined, body };
}

/** `onResponse` of {@link retryMiddleware}: a 429 or 5xx worth a retry is retried; the last answer replaces it. */
async function retryAnswer(
  retrying: RetryMiddlewareState,
  { request, response, options }: { request: Request; response: Response; options: { fetch: unknown } },
): Promise<Response | undefined> {
  const { state } = retrying;
  const exchange = exchangeOf(retrying, request, options);
  if (retrying.recovered.has(response) || !exchange || !state.retry.worthRetrying(request, response)) return undefined;
  const [outcome] = await retryAttempts(state, exchange, response);
  if (outcome instanceof NetworkError) throw outcome;
  return outcome === response ? undefined : outcome;
}

/** `onError` of {@link retryMiddleware}: a failed connection worth a retry is retried; an answer ends the error. */
async function retryFailure(
  retrying: RetryMiddlewareState,
  { request, error, options }: { request: Request; error: unknown; options: { fetch: unknown } },
): Promise<Response | undefined> {
  // the client's own errors (a NetworkError of a middleware that ran before) pass as they are
  if (error instanceof TenantClientError) return undefined;
  const { state } = retrying;
  const failure = networkError(request, error);
  const exchange = exchangeOf(retrying, request, options);
  if (!exchange || !state.retry.worthRetrying(request, failure)) return undefined;
  const [outcome] = await retryAttempts(state, exchange, failure);
  // the original error goes on unchanged when every attempt failed, as without retries
  if (outcome instanceof NetworkError) return undefined;
  retrying.recovered.add(outcome);
  return outcome;
}

/**
 * Middleware for a plain openapi-fetch client that applies {@link retryPolicy}: it sends an
 * idempotent request (GET, HEAD, OPTIONS, PUT, DELETE) again when the server answers 429 or a 5xx
 * (but 501 and 505), or when the connection failed (not on an abort or a timeout), up to `retries` times, waiting the `Retry-After` delay (seconds or an HTTP date) or
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
  const retry = retryPolicy(options);
  const retrying: RetryMiddlewareState = {
    state: { ...sendState({ retry }), retry },
    kept: new WeakMap(),
    recovered: new WeakSet(),
  };
  return {
    onRequest: keepCopy.bind(null, retrying.kept, retry.mayRetry),
    onResponse: retryAnswer.bind(null, retrying),
    onError: retryFailure.bind(null, retrying),
  };
}
