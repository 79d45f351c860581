/**
 * Time limits for calls, opt-in: the client has none by default, as `fetch`, and imports this code
 * only through {@link timeoutAfter}, so an app that sets no timeout does not ship it.
 */
import { TenantClientError, TimeoutError, type RequestLine } from "./errors.js";

/** The longest delay a timer takes (2^31 - 1 ms, about 24.8 days); a longer one would fire at once. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * A time limit for calls, made by {@link timeoutAfter}: the tenant client's `timeout` option, or one
 * call's own `timeout`.
 */
export interface CallTimeout {
  /** The limit, in ms. */
  readonly ms: number;
  /**
   * Internal: starts the limit for one call, next to the call's own `signal` (if any).
   *
   * @internal
   */
  readonly start: (signal: AbortSignal | null | undefined) => RunningTimeout;
}

/** One call's running limit. @internal */
export interface RunningTimeout {
  /** The signal to send the call with: aborted by the limit or by the call's own signal. */
  readonly signal: AbortSignal;
  /** What to throw for `failure`: a {@link TimeoutError} when this limit aborted the call, else `failure` itself. */
  thrown(failure: unknown, line: RequestLine): unknown;
  /** Clears the timer (the call is over). */
  stop(): void;
}

/**
 * A time limit of `ms` for each call, retries included, for the tenant client's `timeout` option
 * (`createTenantClient({ …, timeout: timeoutAfter(30_000) })`) or for one call
 * (`client.GET(path, { timeout: timeoutAfter(5_000) })`; `timeout: false` lifts the client's for that
 * call). A call over its limit is aborted and throws a {@link TimeoutError} (code `TIMEOUT`), also
 * when the body stalls after the headers came; the call's own `signal` still aborts it as
 * `ABORTED`, through `AbortSignal.any` (Node 20.3, Chrome 116, Firefox 124, Safari 17.4 and later).
 *
 * One timer per call, cleared when the call ends: cheaper than `AbortSignal.timeout`, and it keeps
 * no process alive and no stream (`parseAs: "stream"`) under a limit after the call. A limit costs an
 * `AbortSignal` on every request, a few µs of CPU per call in Node.
 *
 * @param ms - a positive number of ms, at most 2^31 − 1 (a longer timer would fire at once)
 * @throws {@link TenantClientError} `INVALID_OPTIONS` for any other `ms`
 * @example
 * ```ts
 * const client = createTenantClient({ baseUrl, auth, timeout: timeoutAfter(30_000) });
 * const { data } = await client.GET("/api/v1/auth/user", { timeout: timeoutAfter(5_000) });
 * ```
 * @see RFC 9110 §9.2.2 (whether a timed-out request may be repeated)
 */
export function timeoutAfter(ms: number): CallTimeout {
  if (!(typeof ms === "number" && ms > 0 && ms <= MAX_TIMER_MS)) {
    throw new TenantClientError(
      "INVALID_OPTIONS",
      `Invalid timeoutAfter(${String(ms)}): a positive number of ms up to ${MAX_TIMER_MS}; for none, give no timeout`,
    );
  }
  return {
    ms,
    start(signal) {
      const controller = new AbortController();
      const timer = setTimeout(
        () => controller.abort(new DOMException(`timed out after ${ms} ms`, "TimeoutError")),
        ms,
      );
      return {
        signal: signal ? AbortSignal.any([signal, controller.signal]) : controller.signal,
        thrown(failure, line) {
          // A timeout while openapi-fetch reads the body is not seen by the middleware. Only the abort
          // itself becomes a TimeoutError: anything else (the token source's own error) goes on unchanged.
          const aborted = failure === controller.signal.reason || (failure as Error | null)?.name === "AbortError";
          return controller.signal.aborted && !signal?.aborted && aborted ? new TimeoutError(line, failure) : failure;
        },
        stop: () => clearTimeout(timer),
      };
    },
  };
}
