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
import type { Middleware } from "openapi-fetch";
import type { AuthStrategy } from "../auth-strategy.js";
import { inScope } from "../base-url.js";
import { bearerTokenOf, NetworkError, TenantClientError, TimeoutError } from "../errors.js";
import type { Log } from "../logger.js";
import { parseRetryAfter } from "../retry-after.js";
import type { RetryOptions } from "./retry.js";

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

type Fetch = (request: Request) => Promise<Response>;

/** The outcome of an attempt: an answer, or the failure of a fetch that got none. */
type Outcome = Response | NetworkError;

/**
 * One call (one `client.GET(…)`) past its first send: the final request and openapi-fetch's
 * per-call `options`, which key what the call keeps. Not the request: middleware registered after
 * this one may replace it.
 */
interface Call {
  readonly fetch: Fetch;
  readonly request: Request;
  readonly options: object;
}

/** Request bodies kept for calls that may have to send again; by `options`. */
const keptBodies = new WeakMap<object, BodyInit>();

/** The body each call's serializer produced, by the serializer (openapi-fetch gives it to middleware in `options`). */
const serialized = new WeakMap<object, unknown>();

/**
 * Internal: wraps a call's body serializer so that the built-in middleware can send the serialized
 * body again on a replay (after a 401, or a retry) instead of reading a copy of the request before
 * it is sent. The tenant client uses it only when no middleware of the caller runs before the
 * built-in one (such middleware may replace the request and its body); a body is then read as before.
 */
export function keepingBody(serialize: (body: never, headers?: never) => unknown): (body: never, headers?: never) => unknown {
  const keeping = (body: never, headers?: never): unknown => {
    const result = serialize(body, headers);
    serialized.set(keeping, result);
    return result;
  };
  return keeping;
}

/**
 * Whether a body can be given to a new Request as it is, with the same headers: a string, bytes, a
 * Blob or URLSearchParams. A stream can be read only once; FormData would get a new boundary.
 */
function isResendable(body: unknown): body is BodyInit {
  return typeof body === "string" || body instanceof ArrayBuffer || ArrayBuffer.isView(body) || body instanceof Blob || body instanceof URLSearchParams;
}

/** When each call's first attempt was sent (`performance.now()`), for its log line; kept only when logging. */
const sentAt = new WeakMap<object, number>();


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

/** Whether the call's request can be sent again: it has no body, or its body was kept. */
function replayable({ request, options }: Omit<Call, "fetch">): boolean {
  return request.body === null || keptBodies.has(options);
}

/** A fresh copy of the call's (possibly sent) request with its kept body, and a new token if given. */
function rebuild({ request, options }: Call, token?: string): Request {
  const headers = new Headers(request.headers);
  if (token) headers.set("authorization", `Bearer ${token}`);
  return new Request(request, { headers, body: keptBodies.get(options) ?? null });
}

/** The token the request carried, kept for the error value of a non-2xx answer. */
function rememberToken(response: Response, request: Request): void {
  const sent = bearerTokenOf(request);
  if (sent) tokensSentFor.set(response, [sent]);
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
  // Responses this instance's onError produced by retrying: logged and settled there, so its
  // onResponse leaves them (another instance on the same client still handles them: a 401 after a
  // recovered network failure is refreshed by the unauthorized part).
  const recovered = new WeakSet<Response>();
  // the last token promise seen resolved, and its valid value
  let seenPromise: unknown;
  let token = "";

  const mayRetry = (request: Request): boolean => retriesOn && IDEMPOTENT.has(request.method);

  /** What `onRequest` returns as the call goes out: when logging, its send time is noted for the log line. */
  const sending = (options: object, replaced?: Request): Request | undefined => {
    if (log) sentAt.set(options, performance.now());
    return replaced;
  };

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
    log?.("debug", request, {}, ": asking the auth strategy for a token");
    return freshToken(pending).then((value) => authorize(request, value));
  };

  /** Logs what an attempt came to: its status, or its failure, with its duration and number. */
  const logOutcome = (request: Request, outcome: Outcome, attempt: number, started: number | undefined): void => {
    if (!log) return;
    const durationMs = Math.round(performance.now() - (started ?? performance.now()));
    if (outcome instanceof Response) {
      log("info", request, { status: outcome.status, durationMs, attempt }, ` ${outcome.status} ${durationMs}ms (attempt ${attempt})`);
    } else {
      const { name: error, code } = outcome;
      log("error", request, { error, code, durationMs, attempt }, ` failed: ${code} after ${durationMs}ms (attempt ${attempt})`);
    }
  };

  /** Sends one more attempt straight to fetch; a rejection comes back as a NetworkError. Logged. */
  const sendAttempt = async (fetch: Fetch, request: Request, attempt: number): Promise<Outcome> => {
    const started = log ? performance.now() : undefined;
    let outcome: Outcome;
    try {
      outcome = await fetch(request);
    } catch (cause) {
      outcome = networkError(request, cause);
    }
    logOutcome(request, outcome, attempt, started);
    return outcome;
  };

  /** The wait before retry number `retryIndex` (0-based) after `outcome`, or `undefined` if no retry. */
  const delayBefore = (outcome: Outcome, retryIndex: number): number | undefined => {
    const answered = outcome instanceof Response;
    // a failure is retried only when the connection failed: an abort or a timeout was asked for
    const retryable = answered ? isRetryableStatus(outcome.status) : outcome.code === "NETWORK_ERROR";
    if (!retryable) return undefined;
    const backoff = Math.min(maxDelay, baseDelay * 2 ** retryIndex);
    const delay = (answered ? parseRetryAfter(outcome.headers.get("retry-after"), now()) : undefined) ?? backoff / 2 + (random() * backoff) / 2;
    // the server asks for longer than we wait: return its answer
    return delay > maxDelay ? undefined : delay;
  };

  /**
   * Retries `first` (an answer or a failure of attempt 1) while retries are left and worthwhile;
   * returns the last outcome and the number of the attempt that produced it. An aborted signal (the
   * caller's, or the client's timeout) ends the waiting: the last outcome is returned.
   */
  const retryLoop = async (call: Call, first: Outcome): Promise<[Outcome, number]> => {
    const { request } = call;
    let outcome = first;
    let attempt = 1;
    for (; attempt <= retries && !request.signal.aborted; attempt++) {
      const delayMs = delayBefore(outcome, attempt - 1);
      if (delayMs === undefined) break;
      const status = outcome instanceof Response ? outcome.status : undefined;
      const error = outcome instanceof NetworkError ? outcome : undefined;
      const next = attempt + 1;
      log?.("warn", request, { status, error: error?.code, delayMs: Math.round(delayMs), attempt: next }, ` ${status ?? error?.code}: retry in ${Math.round(delayMs)}ms (attempt ${next})`);
      retry?.onRetry?.({ attempt: next, status, error, delayMs, method: request.method, path: new URL(request.url).pathname });
      await sleep(delayMs, request.signal);
      if (request.signal.aborted) break;
      if (outcome instanceof Response) discard(outcome);
      outcome = await sendAttempt(call.fetch, rebuild(call), next);
    }
    return [outcome, attempt];
  };

  /**
   * After a 401 to a request that carried our token: tell the strategy, get a new token and send
   * once more if it differs. A strategy that fails here (the session ended) is logged and its
   * error reaches the caller unchanged.
   */
  const answerUnauthorized = async (call: Call, response: Response, rejected: string, attempt: number): Promise<Response> => {
    const { request } = call;
    log?.("info", request, {}, " 401: refreshing the token through the auth strategy");
    let next: string;
    try {
      await auth!.onUnauthorized?.(rejected);
      next = await freshToken();
    } catch (failure) {
      const { name: error, code } = (failure ?? {}) as { name?: unknown; code?: unknown };
      log?.("warn", request, { error, code }, ": session ended, the auth strategy could not give a new token");
      throw failure;
    }
    if (next === rejected) {
      log?.("warn", request, {}, " 401: the auth strategy has no new token; returning the 401");
      return response;
    }
    log?.("info", request, {}, ": token refreshed, sending again");
    discard(response);
    const outcome = await sendAttempt(call.fetch, rebuild(call, next), attempt + 1);
    if (outcome instanceof NetworkError) throw outcome;
    tokensSentFor.set(outcome, [rejected, next]);
    return outcome;
  };

  /** The last step for an answer: the one refresh-and-retry after a 401, and the token sent remembered for an error value. */
  const settle = async (call: Call, response: Response, attempt: number): Promise<Response> => {
    const { request } = call;
    const rejected = bearerTokenOf(request);
    const refresh = parts.unauthorized && response.status === 401 && rejected !== undefined && replayable(call) && inScope(request.url, prefix);
    const settled = refresh ? await answerUnauthorized(call, response, rejected, attempt) : response;
    if (!settled.ok && !tokensSentFor.has(settled)) rememberToken(settled, request);
    return settled;
  };

  /** A response that needs more: retries, then the refresh-and-retry of a 401; `undefined` keeps `response`. */
  const answer = async (call: Call, response: Response, retryNow: boolean): Promise<Response | undefined> => {
    const [outcome, attempt] = retryNow ? await retryLoop(call, response) : [response, 1];
    if (outcome instanceof NetworkError) throw outcome;
    const settled = await settle(call, outcome, attempt);
    return settled === response ? undefined : settled;
  };

  /** Reads a copy of the body before the first send (a body the middleware did not see created). */
  const keepCopy = async (request: Request, options: object, addToken: boolean | undefined): Promise<Request | undefined> => {
    log?.("debug", request, {}, ": keeping a copy of the request body for a possible retry");
    keptBodies.set(options, await request.clone().arrayBuffer());
    return sending(options, addToken ? await withToken(request) : undefined);
  };

  return {
    onRequest({ request, options }) {
      const scoped = inScope(request.url, prefix);
      const addToken = parts.bearer && scoped;
      // keep the body when a 401 or a retry may have to send it again (once per call: another of
      // these middlewares on the same client may have kept it already)
      if (request.body !== null && !keptBodies.has(options) && ((parts.unauthorized && scoped) || mayRetry(request))) {
        const { bodySerializer } = options as { bodySerializer?: object };
        const created = bodySerializer === undefined ? undefined : serialized.get(bodySerializer);
        if (created !== undefined) {
          // the tenant client's request: its serialized body is kept as it is, no copy is read; a
          // streamed body can be sent once only, so the call is not sent again
          if (isResendable(created)) keptBodies.set(options, created);
          else log?.("debug", request, {}, ": the request body is a stream; it will not be sent again");
        } else {
          // a plain openapi-fetch client, or a request that middleware replaced: read a copy
          return keepCopy(request, options, addToken);
        }
      }
      if (!addToken) return sending(options);
      const authorized = withToken(request);
      // a token that had to be awaited: the attempt starts once it is there
      return authorized instanceof Promise ? authorized.then((replaced) => sending(options, replaced)) : sending(options, authorized);
    },

    onResponse({ request, response, options }) {
      // a response our onError recovered by retrying has been logged and settled already
      if (recovered.has(response)) return undefined;
      logOutcome(request, response, 1, sentAt.get(options));
      const retryNow = mayRetry(request) && isRetryableStatus(response.status) && replayable({ request, options });
      const refresh = parts.unauthorized && response.status === 401;
      if (!retryNow && !refresh) {
        if (!response.ok) rememberToken(response, request);
        return undefined;
      }
      return answer({ fetch: options.fetch as Fetch, request, options }, response, retryNow);
    },

    async onError({ request, error, options }) {
      if (error instanceof TenantClientError) return error;
      const failure = networkError(request, error);
      logOutcome(request, failure, 1, sentAt.get(options));
      const call: Call = { fetch: options.fetch as Fetch, request, options };
      // only a failed connection is retried (delayBefore says so too), and only a request that can be sent again
      if (!mayRetry(request) || failure.code !== "NETWORK_ERROR" || !replayable(call)) return parts.network ? failure : undefined;
      const [outcome, attempt] = await retryLoop(call, failure);
      // without the network part, the original error goes on unchanged, as without retries
      if (outcome instanceof NetworkError) return parts.network ? outcome : undefined;
      const settled = await settle(call, outcome, attempt);
      recovered.add(settled);
      return settled;
    },
  };
}
